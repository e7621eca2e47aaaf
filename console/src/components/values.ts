/**
 * How result values read (docs/API.md, "Row encoding"): TIMESTAMP columns are unix microseconds,
 * DATETIME columns ISO strings without a zone (UTC). Both are shown as readable UTC dates and are
 * the x axis of the chart.
 */
import type { Row } from '../api/client';

const DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;
const TIME_NAME = /(^|_)(timestamp|time|ts|at|date|bucket)$/i;
/** Unix microseconds between 2001 and 2286: the only integers read as timestamps, and only in a time-named column. */
const MICROS = [1e15, 1e16] as const;

export type ColumnKind = 'timestamp' | 'number' | 'record' | 'other';

export function columnsOf(rows: Row[]): string[] {
  const seen = new Set<string>();
  for (const row of rows.slice(0, 200)) for (const k of Object.keys(row)) seen.add(k);
  return [...seen];
}

export function kindOf(rows: Row[], column: string): ColumnKind {
  const values = rows.map((r) => r[column]).filter((v) => v !== null && v !== undefined);
  if (!values.length) return 'other';
  if (values.every((v) => typeof v === 'string' && DATETIME.test(v))) return 'timestamp';
  if (values.every((v) => typeof v === 'number')) {
    const micros = values.every((v) => Number.isInteger(v) && (v as number) >= MICROS[0] && (v as number) < MICROS[1]);
    return micros && TIME_NAME.test(column) ? 'timestamp' : 'number';
  }
  if (values.some((v) => typeof v === 'object')) return 'record';
  return 'other';
}

/** Milliseconds since the epoch of a timestamp value. */
export function timestampMs(value: unknown): number | undefined {
  if (typeof value === 'number') return value / 1000;
  if (typeof value === 'string') return Date.parse(value.replace(' ', 'T') + (/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? '' : 'Z'));
  return undefined;
}

export function formatUtc(value: unknown): string {
  const ms = timestampMs(value);
  if (ms === undefined || Number.isNaN(ms)) return String(value);
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(19, 23) === '.000' ? '' : iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction} UTC`;
}
