/**
 * BigQuery's text form of a RANGE (`[2020-01-01, 2020-12-31)`), read while translating: range
 * literals (`RANGE<DATE> '…'`) and CAST of a string literal. The rules are BigQuery's (its
 * reference, "Range literals" and "CAST AS RANGE"): a `[`, the lower bound, a comma and exactly one
 * space, the upper bound, a `)`; each bound `UNBOUNDED`, `NULL` or a literal of the element type in
 * its canonical form; the lower bound before the upper one. Text that only the running query knows
 * is read by `logs.bq_parse_range` (migrations/1764880000000_bigquery-range-functions.js), which
 * holds the same patterns.
 */
import type { RangeElement } from './types.js';

/** A bound's text as written (`2020-01-01`), or null when unbounded. */
export interface RangeBounds {
  readonly lower: string | null;
  readonly upper: string | null;
}

const DATE = '([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})';
const TIME = '(?:[ Tt]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\\.([0-9]{1,6}))?)?';
const PATTERNS: Readonly<Record<RangeElement, RegExp>> = {
  DATE: new RegExp(`^${DATE}$`),
  DATETIME: new RegExp(`^${DATE}${TIME}$`),
  TIMESTAMP: new RegExp(`^${DATE}${TIME}([zZ]|[+-][0-9]{1,2}(?::[0-9]{2})?| ?UTC| [A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)?$`),
};

/** The bounds of a range's text, or why BigQuery refuses it. */
export function parseRangeText(text: string, element: RangeElement): RangeBounds | { error: string } {
  const m = /^\[([^,]+), ([^,]+)\)$/.exec(text);
  if (!m) return { error: 'it must be [lower, upper) with one space after the comma' };
  const bounds: (string | null)[] = [];
  const instants: (number | undefined)[] = [];
  for (const bound of [m[1], m[2]]) {
    if (/^(unbounded|null)$/i.test(bound)) {
      bounds.push(null);
      instants.push(undefined);
      continue;
    }
    const instant = boundInstant(bound, element);
    if (instant === null) return { error: `${bound} is not a ${element}` };
    bounds.push(bound);
    instants.push(instant);
  }
  const [lo, hi] = instants;
  if (lo !== undefined && hi !== undefined && lo >= hi) return { error: 'the lower bound must be before the upper bound' };
  return { lower: bounds[0], upper: bounds[1] };
}

/**
 * A bound as microseconds since the epoch (a wall clock for DATE and DATETIME, an instant for
 * TIMESTAMP), to check the order of the bounds; undefined when a zone name leaves it to the
 * running query (`logs.bq_range` checks it then); null when the text is no valid value.
 */
function boundInstant(text: string, element: RangeElement): number | undefined | null {
  const m = PATTERNS[element].exec(text);
  if (!m) return null;
  const [y, mo, d, h = '0', mi = '0', s = '0', fraction = '', zone] = m.slice(1);
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number);
  const days = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !leap(year) ? 1 : 0);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear, not Date.UTC, which reads years 0–99 as 1900–1999.
  const wall = new Date(0);
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, minute, second);
  const micros = wall.getTime() * 1000 + Number(fraction.padEnd(6, '0') || '0');
  if (!zone || /^ ?UTC$|^[zZ]$/.test(zone)) return micros;
  const offset = /^([+-])([0-9]{1,2})(?::([0-9]{2}))?$/.exec(zone);
  if (!offset) return undefined;
  const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? 0);
  return micros - (offset[1] === '-' ? -1 : 1) * minutes * 60_000_000;
}

function leap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
