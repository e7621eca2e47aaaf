/**
 * The stored BigQuery shape: every JSON object becomes a one-element array (a repeated record),
 * arrays keep their elements (objects inside them become records, not arrays), scalars stay.
 *
 *   toStoredShape({ request: { path: '/a' } })  →  [{ request: [{ path: '/a' }] }]
 *
 * Then `UNNEST(metadata)` is `jsonb_array_elements(metadata)` and rows come back exactly as
 * clients of the original service expect them, with no rewrite on read.
 */
export function toStoredShape(value: unknown): unknown {
  if (isPlainObject(value)) return [toStoredRecord(value)];
  if (Array.isArray(value)) return value.map((item) => (isPlainObject(item) ? toStoredRecord(item) : toStoredShape(item)));
  return value;
}

function toStoredRecord(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(object)) out[fieldName(key)] = toStoredShape(v);
  return out;
}

/**
 * Keys are kept as sent where they are valid identifiers; otherwise every other character
 * becomes `_` (and a leading digit gets a `_` in front), as BigQuery column names require,
 * so that every stored field can be named in a query.
 */
export function fieldName(key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return key;
  const cleaned = key.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(cleaned) || cleaned === '' ? `_${cleaned}` : cleaned;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
