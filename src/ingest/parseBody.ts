/**
 * Reads an ingest request body into a list of events, with the body limit applied to the
 * bytes received *and* to the bytes after decompression (a gzip bomb answers 413 and never
 * holds more than the limit in memory).
 *
 * Accepted forms (docs/INGEST.md, "Routes"):
 *   - `application/json` (or `application/*+json`, or no Content-Type): one event object,
 *     `{"batch": [...]}`, or a JSON array of events;
 *   - `application/x-ndjson` (also `application/ndjson`, `application/jsonl`,
 *     `application/x-jsonlines`): one event per line, blank lines ignored;
 *   - `Content-Encoding: gzip`, `deflate` (zlib or raw) or `br`, or none (`identity`).
 * Any other Content-Type answers 415 with the error envelope.
 */
import type { Request } from 'express';
import { BadRequestError, UnsupportedMediaTypeError, tooManyInRequest } from '../errors.js';
import { isJsonType, readDecodedBody } from '../http/body.js';
import { INGEST_BODY_LIMIT, MAX_EVENTS_PER_REQUEST } from '../inputLimits.js';
import { checkBodyCounts, jsonBodyCounts } from './bodyCounts.js';

const NDJSON_TYPES = new Set([
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
]);

export type BodyFormat = 'json' | 'ndjson';

/** One line of an NDJSON body that is not JSON: reported as an invalid event at its index. */
export interface UnparsedLine {
  index: number;
  message: string;
}

export interface ParsedEvents {
  events: unknown[];
  /** NDJSON lines that did not parse (their slot in `events` holds `undefined`). */
  lineErrors: UnparsedLine[];
  /**
   * False when the body cannot hold a NUL or a lone surrogate: in JSON text they can only
   * arrive as `\u0000` or `\ud800`-`\udfff` escapes (raw control characters are invalid JSON,
   * and invalid UTF-8 decodes to U+FFFD). Then normalisation skips its per-string check.
   */
  mayHoldUnstorable: boolean;
}

/**
 * NDJSON lines that do not parse, at most: each failed JSON.parse costs an exception, so a 2 MB
 * body of a million `x` lines would hold the event loop for many seconds without this cap
 * (test/hardening/bad-input.test.ts). Past it the body is taken as not NDJSON at all: 400, and
 * nothing of it is stored (a few bad lines are reported one by one and cost the others nothing).
 */
export const MAX_LINE_ERRORS = 1000;

const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** Which parser a Content-Type selects; 415 for anything that is not JSON or NDJSON. */
export function bodyFormat(contentType: string | undefined): BodyFormat {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === '' || isJsonType(type)) return 'json';
  if (NDJSON_TYPES.has(type)) return 'ndjson';
  throw new UnsupportedMediaTypeError(
    `Content-Type "${type}" is not accepted: send application/json (an event, {"batch": [...]} or an array of events) or application/x-ndjson (one event per line).`,
  );
}

/** Reads, decompresses and parses the body of an ingest request. */
export async function readIngestBody(req: Request, limit = INGEST_BODY_LIMIT): Promise<ParsedEvents> {
  const format = bodyFormat(req.get('content-type'));
  const bytes = await readDecodedBody(req, limit);
  if (bytes.length === 0)
    throw new BadRequestError('The request body is empty: send an event, {"batch": [...]}, an array of events or NDJSON lines.');
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte order mark
  const mayHoldUnstorable = UNSTORABLE_ESCAPE.test(text);
  // Before parsing: NDJSON counts its events line by line (parseNdjson), so only its objects and arrays are counted here.
  checkBodyCounts(jsonBodyCounts(text, format === 'ndjson'));
  const parsed = format === 'ndjson' ? parseNdjson(text) : { events: parseJsonBody(text), lineErrors: [] };
  return { ...parsed, mayHoldUnstorable };
}

/** One event, `{"batch": [...]}` or an array of events. */
export function parseJsonBody(text: string): unknown[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const detail = (err as Error).message;
    throw new BadRequestError(`The request body is not valid JSON: ${detail}.`, [
      { domain: 'body', reason: 'parseError', message: detail, location: 'body' },
    ]);
  }
  if (Array.isArray(value)) return value;
  if (typeof value === 'object' && value !== null) {
    const batch = (value as { batch?: unknown }).batch;
    if (batch !== undefined) {
      if (!Array.isArray(batch))
        throw new BadRequestError('"batch" must be an array of events.', [
          { domain: 'body', reason: 'invalidBatch', message: '"batch" must be an array', location: 'batch' },
        ]);
      return batch;
    }
    return [value];
  }
  throw new BadRequestError('The request body must be an event object, {"batch": [...]} or an array of events.', [
    { domain: 'body', reason: 'invalidBody', message: `got a JSON ${value === null ? 'null' : typeof value}`, location: 'body' },
  ]);
}

/** One event per non-blank line; a line that is not JSON is reported by its event index. */
export function parseNdjson(text: string): Omit<ParsedEvents, 'mayHoldUnstorable'> {
  const events: unknown[] = [];
  const lineErrors: UnparsedLine[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end).trim();
    start = end + 1;
    if (line === '') continue;
    if (events.length === MAX_EVENTS_PER_REQUEST) throw tooManyInRequest('events', MAX_EVENTS_PER_REQUEST);
    try {
      events.push(JSON.parse(line));
    } catch (err) {
      lineErrors.push({ index: events.length, message: `line is not valid JSON: ${(err as Error).message}` });
      events.push(undefined);
      if (lineErrors.length > MAX_LINE_ERRORS) {
        throw new BadRequestError(
          `The request body is not NDJSON: more than ${MAX_LINE_ERRORS} lines are not JSON (the first, line of event ${lineErrors[0].index}: ${lineErrors[0].message}). Nothing was stored.`,
          [{ domain: 'body', reason: 'parseError', message: `more than ${MAX_LINE_ERRORS} lines are not JSON`, location: 'body' }],
        );
      }
    }
  }
  return { events, lineErrors };
}
