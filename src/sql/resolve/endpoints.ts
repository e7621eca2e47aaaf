/**
 * Endpoints read as tables: an endpoint's stored query may name another endpoint
 * (``select date from `nested` ``). The named endpoint's query is resolved on its own — its own
 * CTEs and sources, none of the reader's CTEs or columns — and becomes a derived table. Its
 * `@params` share the reader's numbering, so the same name is the same value.
 *
 * Resolution order of a table name (resolve/from.ts): a CTE in scope, then a source, then an
 * endpoint. Only contexts of endpoint text carry `endpoints`; a caller's sandboxed `sql` has no
 * lookup at all, so naming an endpoint there is the same SqlSandboxError as naming a source.
 */
import type * as F from '../ast/from.js';
import { SqlError, SqlNestingError, type SqlErrorClass } from '../errors.js';
import { parseQuery } from '../parser.js';
import type { Context, EndpointLookup, NestedEndpoints, Resolved } from './scope.js';
import { MAX_ENDPOINT_DEPTH } from '../../inputLimits.js';

export function nestedEndpoints(lookup: EndpointLookup | undefined, self: string | undefined): NestedEndpoints | undefined {
  return lookup && { lookup, chain: self === undefined ? [] : [self], depth: 0 };
}

/**
 * The endpoint a table reference names, resolved as a derived table; undefined when the context
 * reads no endpoints or none has that name. Errors inside the named endpoint's text are raised
 * again at the reference, naming the endpoint; cycles and depth are SqlNestingError with the chain.
 */
export function resolveEndpointTable(item: F.TableRef, ctx: Context): Resolved | undefined {
  const nested = ctx.endpoints;
  const endpoint = nested?.lookup(item.name);
  if (!nested || !endpoint) return undefined;
  const chain = [...nested.chain, endpoint.name];
  if (nested.chain.includes(endpoint.name)) {
    throw new SqlNestingError(`endpoints read each other in a cycle: ${chain.join(' → ')}`, ctx.text, item.pos, chain);
  }
  if (nested.depth + 1 > MAX_ENDPOINT_DEPTH) {
    throw new SqlNestingError(
      `endpoints are nested more than ${MAX_ENDPOINT_DEPTH} levels deep: ${chain.join(' → ')}`,
      ctx.text,
      item.pos,
      chain,
    );
  }
  const inner: Context = {
    resolveQuery: ctx.resolveQuery,
    translation: ctx.translation,
    text: endpoint.query,
    ...(ctx.sources && { sources: ctx.sources }),
    ctes: new Map(),
    endpoints: { lookup: nested.lookup, chain, depth: nested.depth + 1 },
  };
  try {
    return ctx.resolveQuery(parseQuery(endpoint.query), inner);
  } catch (err) {
    if (err instanceof SqlNestingError) throw new SqlNestingError(err.detail, ctx.text, item.pos, err.chain);
    if (err instanceof SqlError) {
      throw new (err.constructor as SqlErrorClass)(`endpoint ${endpoint.name} cannot be read: ${err.message}`, ctx.text, item.pos);
    }
    throw err;
  }
}
