/**
 * Event timestamps, kept to the microsecond (JavaScript's Date keeps only milliseconds).
 * Accepted: ISO 8601 strings (read as UTC when they carry no offset), and unix time as a
 * number in seconds, milliseconds, microseconds or nanoseconds, told apart by magnitude.
 */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

const MAX_OFFSET_HOURS = 15;

/** The latest instant a JavaScript Date (and microsToIso) can hold, in microseconds. */
export const MAX_DATE_MICROS = 8_640_000_000_000_000_000n;

/** Microseconds since the epoch, or an error message. */
export function parseEventTimestamp(value: unknown): { micros: bigint } | { error: string } {
  if (typeof value === 'number') return fromUnixNumber(value);
  if (typeof value === 'string') return fromIsoString(value.trim());
  return { error: 'timestamp must be an ISO 8601 string or a unix time number' };
}

function fromUnixNumber(n: number): { micros: bigint } | { error: string } {
  if (!Number.isFinite(n) || n < 0) return { error: 'timestamp must be a positive unix time' };
  // Magnitudes: seconds until year 5138 are < 1e11; ms < 1e14; µs < 1e17; beyond that ns.
  if (n < 1e11) return { micros: BigInt(Math.round(n * 1e6)) };
  if (n < 1e14) return { micros: BigInt(Math.round(n * 1e3)) };
  if (n < 1e17) return { micros: BigInt(Math.round(n)) };
  return { micros: BigInt(Math.round(n / 1e3)) };
}

function fromIsoString(s: string): { micros: bigint } | { error: string } {
  const m = ISO_RE.exec(s);
  if (!m) return { error: `timestamp "${s.slice(0, 64)}" is not ISO 8601 (e.g. 2026-11-22T13:00:00.123456Z)` };
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(sec);
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (month < 1 || month > 12 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return { error: `timestamp "${s.slice(0, 64)}" is not a valid date and time` };
  }
  let offsetMinutes = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    // Strict: `+99:99` was read as 100 hours and 39 minutes and moved the event silently (issue 25).
    // Postgres' own range: up to 15:59 either way (real offsets are -12:00 to +14:00).
    if (hours > MAX_OFFSET_HOURS || minutes > 59) {
      return { error: `timestamp "${s.slice(0, 64)}" has an offset out of range (at most ±${MAX_OFFSET_HOURS}:59)` };
    }
    offsetMinutes = sign * (hours * 60 + minutes);
  }
  const fracMicros = BigInt((frac + '000000').slice(0, 6));
  return { micros: BigInt(ms) * 1000n + fracMicros - BigInt(offsetMinutes) * 60_000_000n };
}

/** `2026-11-22T13:00:00.123456Z`: what Postgres reads into timestamptz without losing microseconds. */
export function microsToIso(micros: bigint): string {
  const ms = micros / 1000n;
  const rest = micros % 1000n;
  const iso = new Date(Number(ms)).toISOString(); // ...ss.mmmZ
  return `${iso.slice(0, -1)}${rest.toString().padStart(3, '0')}Z`;
}
