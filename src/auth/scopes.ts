/**
 * What a key may do (docs/API.md, "Keys and scopes"). A key holds broad scopes (`query`,
 * `ingest`, `admin`) and, as the original service's access tokens do, scopes limited to one
 * resource: `query:endpoint:<endpoint id>` runs that endpoint only, `ingest:source:<source id>`
 * ingests into that source only. `admin` may do everything.
 *
 *   grants(['query:endpoint:0b6c…'], 'query', '0b6c…')   // true
 *   grants(['query:endpoint:0b6c…'], 'query', 'other')   // false
 *   reaches(['query:endpoint:0b6c…'], 'query')            // true: some endpoint, checked once it is known
 */
import type { Scope } from '../config.js';
import { isUuid } from '../ids.js';

export type ResourceScope = `query:endpoint:${string}` | `ingest:source:${string}`;
/** A scope a key may hold. */
export type KeyScope = Scope | ResourceScope;

/** The resource kind a family of scopes can be limited to. */
const RESOURCE: Partial<Record<Scope, string>> = { query: 'query:endpoint:', ingest: 'ingest:source:' };
/** A resource scope as a JSON Schema pattern (the key body's schema, src/auth/routes.ts). */
export const RESOURCE_SCOPE_PATTERN = '^(query:endpoint|ingest:source):[0-9a-fA-F-]{36}$';
const RESOURCE_SCOPE_RE = /^(query:endpoint|ingest:source):([0-9a-f-]{36})$/i;

/** Whether the key may use `scope` on the resource `id` (an endpoint's or a source's id). */
export function grants(scopes: readonly string[], scope: Scope, id: string): boolean {
  if (scopes.includes('admin') || scopes.includes(scope)) return true;
  const prefix = RESOURCE[scope];
  return prefix !== undefined && scopes.includes(prefix + id.toLowerCase());
}

/** Whether the key may use `scope` on some resource: routes check which one once it is known (`grants`). */
export function reaches(scopes: readonly string[], scope: Scope): boolean {
  if (scopes.includes('admin') || scopes.includes(scope)) return true;
  const prefix = RESOURCE[scope];
  return prefix !== undefined && scopes.some((s) => s.startsWith(prefix));
}

/** A resource scope with its id checked and lower-cased, or undefined when `value` is not one. */
export function resourceScope(value: string): ResourceScope | undefined {
  const m = RESOURCE_SCOPE_RE.exec(value);
  return m && isUuid(m[2]) ? (`${m[1]}:${m[2].toLowerCase()}` as ResourceScope) : undefined;
}
