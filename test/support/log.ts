import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A logger (level debug) whose lines land in `lines`, parsed. */
export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}
