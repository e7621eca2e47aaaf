/**
 * Request bodies, shared by every route that reads one: the raw bytes with a limit applied before
 * *and* after decompression (a gzip bomb answers 413 and never holds more than the limit in
 * memory), and the JSON body middleware of the management and query routes. Ingest parses its
 * own formats (JSON, NDJSON, OTLP) from the bytes read here (src/ingest/parseBody.ts).
 */
import express, { type Request, type RequestHandler } from 'express';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { JSON_BODY_LIMIT } from '../inputLimits.js';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

const JSON_TYPES = /^application\/(?:json|[a-z0-9.+-]*\+json)$/;

/** `application/json` or `application/*+json` (the media type alone, lower-cased). */
export function isJsonType(mediaType: string): boolean {
  return JSON_TYPES.test(mediaType);
}

/** The body's bytes after Content-Encoding (415 for an unknown one), at most `limit` of them before and after. */
export async function readDecodedBody(req: Request, limit: number): Promise<Buffer> {
  const encoding = (req.get('content-encoding') ?? 'identity').trim().toLowerCase();
  if (!['identity', 'gzip', 'x-gzip', 'deflate', 'br', ''].includes(encoding)) {
    throw new UnsupportedMediaTypeError(
      `Content-Encoding "${encoding}" is not accepted: send gzip, deflate, br or none.`,
      'Content-Encoding',
    );
  }
  return decompress(await readRaw(req, limit), encoding, limit);
}

/** The request bytes, at most `limit` of them; 413 as soon as more arrive (or Content-Length says so). */
function readRaw(req: Request, limit: number): Promise<Buffer> {
  const declared = Number(req.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    return new Promise((_, reject) => afterDraining(req, limit, () => reject(new PayloadTooLargeError(limit))));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) afterDraining(req, limit, () => reject(err));
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish(new PayloadTooLargeError(limit));
      chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (err: Error) => finish(new BadRequestError(`The request body could not be read: ${err.message}`));
    const onClose = () => finish(new BadRequestError('The request was aborted before its body was complete.')); // after 'end' this is a no-op
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** How long a refused body is read and discarded before its refusal is sent (`afterDraining`). */
const LINGER_MS = 5_000;
/** How much of a refused body is read and discarded, in multiples of its route's limit. */
const LINGER_LIMITS = 4;

/**
 * Reads and discards the rest of a refused body, then calls `answer`: a lingering close, as nginx
 * does. A server that answers and closes while the client is still sending makes the client's
 * kernel receive a reset, and the client (Node's http, most log shippers) then reports EPIPE or
 * ECONNRESET instead of reading the 413; seen in the hostile tester's 11 MB body on a loaded
 * machine. Bounded: the answer goes out at once for a body declared past LINGER_LIMITS × `limit`,
 * and after at most LINGER_MS or that many more bytes otherwise; nothing read is kept.
 */
function afterDraining(req: Request, limit: number, answer: () => void): void {
  const declared = Number(req.get('content-length'));
  if (req.readableEnded || req.destroyed || (Number.isFinite(declared) && declared > LINGER_LIMITS * limit)) {
    req.resume(); // Node discards what still arrives; the client may see the connection reset
    return answer();
  }
  let drained = 0;
  let done = false;
  const stop = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', stop);
    req.off('close', stop);
    req.off('error', stop);
    answer();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > LINGER_LIMITS * limit) stop();
  };
  const timer = setTimeout(stop, LINGER_MS);
  req.on('data', onData);
  req.on('end', stop);
  req.on('close', stop);
  req.on('error', stop);
  req.resume(); // nobody else reads it: it flows into onData
}

/** Decompressed bytes, never more than `limit` of them in memory (zlib stops at maxOutputLength). */
async function decompress(raw: Buffer, encoding: string, limit: number): Promise<Buffer> {
  if (encoding === 'identity' || encoding === '' || raw.length === 0) return raw;
  const options = { maxOutputLength: limit };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return await gunzip(raw, options);
    if (encoding === 'br') return await brotli(raw, options);
    // "deflate" means zlib-wrapped deflate, but some clients send raw deflate: accept both.
    return await inflate(raw, options).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ERR_BUFFER_TOO_LARGE') throw err;
      return inflateRaw(raw, options);
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new PayloadTooLargeError(limit);
    throw new BadRequestError(`The request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`, [
      { domain: 'body', reason: 'invalidEncoding', message: (err as Error).message, location: 'Content-Encoding' },
    ]);
  }
}

const parseJson = express.json({ limit: JSON_BODY_LIMIT, type: () => true, strict: false });

/**
 * Middleware for the management API: a JSON body of at most 1 MB (also after gzip), 415 for a
 * body of another Content-Type, nothing parsed (`req.body` undefined) when there is no body.
 */
export const jsonBody: RequestHandler = (req, res, next) => {
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
  if (!hasBody) {
    req.body = undefined;
    return next();
  }
  const type = (req.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type !== '' && !isJsonType(type)) {
    throw new UnsupportedMediaTypeError(`Content-Type "${type}" is not accepted: send the resource as application/json.`);
  }
  // Refused on its Content-Length here, not by the parser: body-parser reads a refused body to its
  // end, however long it is declared, before it answers (so a body without Content-Length that
  // passes the limit needs no draining of ours).
  if (Number(length) > JSON_BODY_LIMIT) return afterDraining(req, JSON_BODY_LIMIT, () => next(new PayloadTooLargeError(JSON_BODY_LIMIT)));
  parseJson(req, res, next);
};
