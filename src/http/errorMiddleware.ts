import type { ErrorRequestHandler, RequestHandler } from 'express';
import {
  TooManyRequestsError,
  AppError,
  BadRequestError,
  InternalError,
  NotFoundError,
  PayloadTooLargeError,
  QueryTimeoutError,
  UnavailableError,
} from '../errors.js';
import type { Logger } from '../logger.js';
import { isDatabaseUnavailable } from '../db/connectionErrors.js';
import { exchangeOf } from './pipeline.js';

/** Maps any thrown value to an AppError. Unknown errors become 500 with no detail leaked. */
export function toAppError(err: unknown, queryTimeoutMs: number): AppError {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; type?: string; status?: number; message?: string; limit?: number };
  // body-parser / raw-body errors carry an HTTP status and a type.
  if (e.type === 'entity.too.large') return new PayloadTooLargeError(e.limit ?? 0);
  if (e.type === 'entity.parse.failed') return new BadRequestError('The request body is not valid JSON.');
  if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
    return new BadRequestError('Unsupported content encoding or charset.');
  if (e.type === 'request.aborted') return new BadRequestError('The request was aborted.');
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return new BadRequestError(e.message ?? 'Bad request.');
  if (e.code === '57014') return new QueryTimeoutError(queryTimeoutMs);
  // A NUL byte or invalid text in a value the caller sent (e.g. `/api/endpoints/logs.all%00`,
  // looked up by name) is refused by Postgres with 22021/22P05 wherever it is bound: bad input,
  // so 400, not 500 (test/hardening/bad-input.test.ts).
  if (e.code === '22021' || e.code === '22P05') {
    return new BadRequestError('A value in the request contains a character the database cannot store (such as a NUL byte).');
  }
  if (isDatabaseUnavailable(err)) {
    return new UnavailableError();
  }
  return new InternalError();
}

export function errorMiddleware(logger: Logger, queryTimeoutMs: number): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const appError = toAppError(err, queryTimeoutMs);
    if (appError.httpStatus >= 500) {
      // The log gets the cause; the client gets the envelope without SQL, stacks or URLs.
      logger.error({ err, id: exchangeOf(req)?.id, method: req.method, path: req.path }, 'request failed');
    }
    if (res.headersSent) return void res.end();
    if (appError instanceof TooManyRequestsError || appError instanceof UnavailableError)
      res.set('Retry-After', String(appError.retryAfterSeconds));
    res.status(appError.httpStatus).json(appError.toBody());
  };
}

export const notFoundHandler: RequestHandler = (req) => {
  throw new NotFoundError(`No route for ${req.method} ${req.path}.`);
};
