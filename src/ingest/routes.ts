/**
 * Ingest routes, ingest scope (admin too); the key in a header or the `api_key` parameter:
 *
 * - `POST /api/logs`, `/logs` (the original's JavaScript transports), `/api/events`: one handler.
 *   The source is `?source=<uuid or name>`, `?source_name=<name>` or the `x-source` header.
 * - `POST /v1/logs`: OTLP/HTTP logs, protobuf or JSON (otlpLogs.ts), into the same sources.
 *
 * Every answer comes after the valid events are committed; answer.ts says its shapes.
 *
 * Decisions where the contract leaves a choice (docs/INGEST.md has them all):
 * - Content-Type other than JSON (`application/json`, `*+json`, none) or NDJSON
 *   (`application/x-ndjson`, `application/ndjson`, `application/jsonl`, `application/x-jsonlines`)
 *   answers 415 with the error envelope; an unknown Content-Encoding too.
 * - An event holding the NUL character or an unpaired surrogate (which Postgres `text`/`jsonb`
 *   cannot store), or nested more than 100 levels, is an invalid event: reported by index,
 *   nothing is stripped.
 * - An empty batch (`[]`, `{"batch": []}`, NDJSON of blank lines) answers 200 with count 0;
 *   an empty body answers 400.
 */
import { Router, type Request, type Response } from 'express';
import { authorize, type Authenticator } from '../auth/authenticate.js';
import { ingestAnswer, notStoredMessage } from './answer.js';
import { otlpEncodingOf, otlpLogEvents, otlpResponse } from './otlpLogs.js';
import { UnsupportedMediaTypeError } from '../errors.js';
import { readDecodedBody } from '../http/body.js';
import { INGEST_BODY_LIMIT } from '../inputLimits.js';
import { readIngestBody } from './parseBody.js';
import type { IngestService } from './service.js';

export const INGEST_PATHS = ['/api/logs', '/logs', '/api/events'];
export const OTLP_LOGS_PATH = '/v1/logs';

export function ingestRoutes(auth: Pick<Authenticator, 'require'>, ingest: IngestService): Router {
  const router = Router();
  const requireIngest = auth.require('ingest');

  const ingestEvents = async (req: Request, res: Response) => {
    const source = await ingest.resolveSource(req.query, req.headers);
    authorize(req, 'ingest', source.id); // a key limited to other sources (src/auth/scopes.ts)
    const parsed = await readIngestBody(req);
    const unparsed = parsed.lineErrors.length ? new Map(parsed.lineErrors.map((l) => [l.index, l.message])) : undefined;
    const outcome = await ingest.ingest(source, { events: parsed.events, mayHoldUnstorable: parsed.mayHoldUnstorable, unparsed });
    const answer = ingestAnswer(outcome);
    res.status(answer.status).json(answer.body);
  };
  // One route per path (not an array of paths), so that each is its own metric label.
  for (const path of INGEST_PATHS) router.post(path, requireIngest, ingestEvents);

  router.post(OTLP_LOGS_PATH, requireIngest, async (req: Request, res: Response) => {
    const encoding = otlpEncodingOf(req.get('content-type'));
    if (!encoding) {
      throw new UnsupportedMediaTypeError(
        `Content-Type "${req.get('content-type')}" is not accepted at ${OTLP_LOGS_PATH}: send OTLP logs as application/x-protobuf or application/json.`,
      );
    }
    const source = await ingest.resolveSource(req.query, req.headers);
    authorize(req, 'ingest', source.id);
    const events = otlpLogEvents(await readDecodedBody(req, INGEST_BODY_LIMIT), encoding);
    // Protobuf strings may hold NUL (JSON ones only as an escape): check every string.
    const outcome = await ingest.ingest(source, { events, mayHoldUnstorable: true });
    const notStored = outcome.rejected + outcome.dropped.stale + outcome.dropped.future;
    // 200 with partial_success even when no record was stored: the request itself was valid,
    // and OTLP exporters read rejections from partial_success, not from the status.
    const answer = otlpResponse(encoding, notStored, notStoredMessage(outcome));
    res.status(200).type(answer.contentType).send(answer.body);
  });
  return router;
}
