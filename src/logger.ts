import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout. Secrets (keys, SQL parameters) are never logged. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization'], censor: '[redacted]' },
  });
}
