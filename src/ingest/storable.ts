/**
 * What Postgres cannot store, found before the INSERT so that it answers 400 for the one event
 * and not 500 for the batch: the NUL character (`text` cannot hold it and `jsonb` rejects
 * `\u0000`), lone UTF-16 surrogates (`jsonb` rejects the `\ud800` escape JSON.stringify writes
 * for them) and nesting deep enough to exhaust a parser's stack.
 *
 * Such events are rejected, not repaired: silently changing a log line would hide the problem
 * from the shipper that sent it.
 */
export const MAX_NESTING = 100;

/** Why `value` cannot be stored, or undefined when it can. */
export function unstorableReason(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return stringProblem(value);
  if (typeof value === 'number') return numberProblem(value);
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth >= MAX_NESTING) return `is nested more than ${MAX_NESTING} levels deep`;
  if (Array.isArray(value)) {
    for (const item of value) {
      const reason = unstorableReason(item, depth + 1);
      if (reason) return reason;
    }
    return undefined;
  }
  // Keys need no check: every key is stored through fieldName, which replaces such characters.
  for (const key in value) {
    const reason = unstorableReason((value as Record<string, unknown>)[key], depth + 1);
    if (reason) return reason;
  }
  return undefined;
}

/**
 * JSON.parse reads `1e400` as Infinity, which JSON.stringify writes as null: the value would
 * change silently (issue 25, finding 8). Postgres' jsonb numbers have no infinity either.
 */
export function numberProblem(n: number): string | undefined {
  return Number.isFinite(n)
    ? undefined
    : 'holds a number beyond the range of a 64-bit float (such as 1e400), which would be stored as null';
}

const SUSPECT = /[\0\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function stringProblem(s: string): string | undefined {
  if (!SUSPECT.test(s)) return undefined; // the common case: one scan, no match
  if (s.includes('\0')) return 'contains the NUL character (\\u0000), which Postgres cannot store; remove it or escape it';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode); send valid UTF-8 text';
  return undefined;
}
