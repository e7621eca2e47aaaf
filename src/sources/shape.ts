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
  const keys = Object.keys(object);
  const names = storedNames(keys);
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) setOwn(out, names[i], toStoredShape(object[keys[i]]));
  return out;
}

/**
 * `target[key] = value` as an own property, also for `__proto__`: assigning that key to a plain
 * object sets its prototype instead, and the field vanished from the stored event, or an OTLP
 * attribute's children moved up into its parent (issue 25, finding 7). JSON.parse makes such
 * keys own properties; so does this.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * Keys are kept as sent where they are valid identifiers; otherwise every other character
 * becomes `_` (and a leading digit gets a `_` in front), as BigQuery column names require,
 * so that every stored field can be named in a query.
 */
export function fieldName(key: string): string {
  if (IDENTIFIER.test(key)) return key;
  const cleaned = key.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[0-9]/.test(cleaned) || cleaned === '' ? `_${cleaned}` : cleaned;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The stored names of one object's keys, in order, with no value lost when two keys normalise to
 * one name (`content-type` and `content_type`): a key that is an identifier is always stored as
 * sent; any other key becomes `fieldName(key)`, and when that name is already taken (by a key
 * stored as sent, by an earlier renamed key, or by a name in `reserved`) it gets the first free
 * suffix `_2`, `_3`, … (`content_type_2`). Which key gets the suffix therefore never depends on
 * the order of keys for identifier keys, and follows the object's key order among renamed ones.
 */
export function storedNames(keys: readonly string[], reserved?: ReadonlySet<string>): string[] {
  const names = keys.map((k) => (IDENTIFIER.test(k) && !reserved?.has(k) ? k : undefined));
  if (!names.includes(undefined)) return names as string[];
  const taken = new Set<string>(reserved);
  for (const n of names) if (n !== undefined) taken.add(n);
  return names.map((n, i) => {
    if (n !== undefined) return n;
    const base = fieldName(keys[i]);
    let name = base;
    for (let suffix = 2; taken.has(name); suffix++) name = `${base}_${suffix}`;
    taken.add(name);
    return name;
  });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
