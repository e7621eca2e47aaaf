/**
 * The fields of a stored record that an API answer shows, named one by one: a column added to a
 * table later (a key's hash, say) stays out of the answers until a route lists it.
 */
export function pick<T extends object, K extends keyof T>(record: T, fields: readonly K[]): Pick<T, K> {
  return Object.fromEntries(fields.map((field) => [field, record[field]])) as Pick<T, K>;
}
