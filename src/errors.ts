/**
 * One error family, one HTTP status each. Routes and services throw these; the error
 * middleware (src/http/errorMiddleware.ts) turns them into the envelope of docs/API.md, "Errors":
 *
 *   {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "...",
 *              "errors": [{"domain": "params", "reason": "missingParameter", "message": "...", "location": "interval"}]}}
 */
export interface ErrorDetail {
  domain: string;
  reason: string;
  message: string;
  location?: string;
}

export class AppError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly status: string,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }

  toBody(): { error: { code: number; status: string; message: string; errors: ErrorDetail[] } } {
    const errors = this.details.length ? this.details : [{ domain: 'global', reason: this.status.toLowerCase(), message: this.message }];
    return { error: { code: this.httpStatus, status: this.status, message: this.message, errors } };
  }
}

/** 400: a parameter, body or query the caller must change. */
export class BadRequestError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, 'INVALID_ARGUMENT', message, details);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(
    message = 'An API key is required: send it in the X-API-KEY header, as "Authorization: Bearer <key>" or as the api_key query parameter.',
  ) {
    super(401, 'UNAUTHENTICATED', message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, 'PERMISSION_DENIED', message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(404, 'NOT_FOUND', message, details);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(409, 'ALREADY_EXISTS', message, details);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, message = `The request body is larger than the limit of ${limitBytes} bytes.`) {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}

/** 413 for an ingest request over a count limit (events, or objects and arrays), naming it. */
export function tooManyInRequest(what: string, limit: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    limit,
    `The request holds more than ${limit} ${what}, the limit of one request; send smaller batches. Nothing was stored.`,
  );
}

/** 422: an endpoint or source definition that cannot be saved. */
export class UnprocessableError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(422, 'FAILED_PRECONDITION', message, details);
  }
}

export class QueryTimeoutError extends AppError {
  constructor(timeoutMs: number) {
    super(504, 'DEADLINE_EXCEEDED', `The query ran longer than the time limit of ${timeoutMs} ms and was cancelled.`);
  }
}

export class UnavailableError extends AppError {
  readonly retryAfterSeconds = 1;
  constructor(message = 'The database is unavailable; try again shortly.') {
    super(503, 'UNAVAILABLE', message);
  }
}

export class InternalError extends AppError {
  constructor() {
    super(500, 'INTERNAL', 'Internal error. The service log has the details.');
  }
}

/** A missing or invalid parameter of an endpoint, named in `location`. */
export function parameterError(name: string, reason: 'missingParameter' | 'invalidParameter', message: string): BadRequestError {
  return new BadRequestError(message, [{ domain: 'params', reason, message, location: name }]);
}

/** 415: a body of a Content-Type or Content-Encoding the route does not read. */
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string, header: 'Content-Type' | 'Content-Encoding' = 'Content-Type') {
    super(415, 'INVALID_ARGUMENT', message, [{ domain: 'body', reason: 'unsupportedMediaType', message, location: header }]);
  }
}

/**
 * 429: the API key is over its request rate, its concurrent queries or its query time, or the
 * client address sent too many unknown keys; `Retry-After` says when to try again.
 */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    reason: 'rateLimited' | 'tooManyQueries' | 'queryTimeExhausted' | 'unknownKeys',
  ) {
    super(429, 'RESOURCE_EXHAUSTED', message, [{ domain: 'limits', reason, message }]);
  }
}
