/**
 * An alert's cron, read in UTC: the latest time it was due (what the scheduler runs) and the next
 * ones (the console shows them; the minimum-interval rule reads them). node-cron parses and
 * validates the expression (five fields, or six with seconds first); the times are found here
 * because node-cron only looks forward from now and in local time.
 *
 * Day of month and day of week follow cron: when both are restricted, either one matching is
 * enough.
 */
import cron from 'node-cron';

/** How far back the latest due time is looked for: a tick missed for longer is not caught up. */
export const CATCH_UP_MS = 24 * 3_600_000;
const MINUTE = 60_000;

export interface CronSchedule {
  /** The latest due time ≤ `now` and ≥ `now - CATCH_UP_MS`, to the second; undefined if none. */
  latestDue(now: number): number | undefined;
  /** The next `count` due times after `now`. */
  nextDue(now: number, count: number): number[];
}

/** The problem of an expression, worded for a 422; undefined when it is valid. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6)
    return 'cron must have five fields (minute hour day-of-month month day-of-week), or six with seconds first';
  const checked = cron.validateDetailed(expression);
  if (!checked.valid) return `cron is invalid: ${checked.errors.map((e) => e.message).join('; ')}`;
  return undefined;
}

export function cronSchedule(expression: string): CronSchedule {
  const f = cron.parse(expression);
  const numbers = (values: ReadonlyArray<number | string>) => new Set(values.filter((v): v is number => typeof v === 'number'));
  const seconds = [...numbers(f.second)].sort((a, b) => a - b);
  const minutes = numbers(f.minute);
  const hours = numbers(f.hour);
  const days = numbers(f.dayOfMonth);
  const months = numbers(f.month);
  const weekdays = new Set([...numbers(f.dayOfWeek)].map((d) => d % 7));
  const anyDay = days.size >= 31;
  const anyWeekday = weekdays.size >= 7;
  const dayMatches = (d: Date) => {
    const byDay = days.has(d.getUTCDate());
    const byWeekday = weekdays.has(d.getUTCDay());
    if (anyDay || anyWeekday) return byDay && byWeekday;
    return byDay || byWeekday;
  };
  const minuteMatches = (start: number) => {
    const d = new Date(start);
    return minutes.has(d.getUTCMinutes()) && hours.has(d.getUTCHours()) && months.has(d.getUTCMonth() + 1) && dayMatches(d);
  };
  return {
    latestDue(now) {
      const nowSecond = Math.floor(now / 1000) * 1000;
      for (let start = Math.floor(now / MINUTE) * MINUTE; start >= now - CATCH_UP_MS; start -= MINUTE) {
        if (!minuteMatches(start)) continue;
        for (let i = seconds.length - 1; i >= 0; i--) {
          const at = start + seconds[i] * 1000;
          if (at <= nowSecond) return at;
        }
      }
      return undefined;
    },
    nextDue(now, count) {
      const found: number[] = [];
      // A year of minutes at most: an expression like "0 0 30 2 *" (30 February) is never due.
      const end = now + 366 * 24 * 60 * MINUTE;
      for (let start = Math.floor(now / MINUTE) * MINUTE; start < end && found.length < count; start += MINUTE) {
        if (!minuteMatches(start)) continue;
        for (const s of seconds) {
          const at = start + s * 1000;
          if (at > now && found.length < count) found.push(at);
        }
      }
      return found;
    },
  };
}

/** The problem of a schedule that runs more often than every `minSeconds`, or never; undefined if fine. */
export function intervalProblem(expression: string, minSeconds: number, now = Date.now()): string | undefined {
  const [first, second] = cronSchedule(expression).nextDue(now, 2);
  if (first === undefined) return 'cron is never due';
  if (second !== undefined && second - first < minSeconds * 1000)
    return `cron runs more often than every ${minSeconds} s (ALERT_MIN_INTERVAL_SECONDS)`;
  return undefined;
}
