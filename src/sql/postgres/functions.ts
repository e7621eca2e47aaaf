/**
 * The Postgres functions that printed SQL may call, with their facts
 * (postgres/facts.ts). It is the only list of function names on the Postgres side: wall 2's
 * allowlist (validate.ts) and every rewrite (narrow.ts, cteOrder.ts, constantCte.ts, QUALIFY,
 * UNNEST guards, OVER attachment) ask it.
 *
 * It is derived: each BigQuery entry of functions.ts declares the Postgres functions its builder
 * emits (`emits`), and EMITTED_BY_TRANSLATOR adds what the resolver, coerce.ts and the AST helpers
 * write themselves. A name declared twice must carry the same facts, or loading fails.
 *
 * Lookups are one Map read: the rewrites ask for every call node of every query.
 */
import { INT64_FUNCTION, JSON_FUNCTION, PARSE_RANGE_FUNCTION, RANGE_FUNCTION, SAFE_FUNCTIONS, TIMESTAMP_FUNCTION } from '../coerce.js';
import { FUNCTIONS } from '../functions.js';
import { HOT_LEAF_DENSE, HOT_LEAF_EXACT, isRareTrigramsFunction, SEARCH_ASCII_WORDS, SEARCH_INNER_TRIGRAMS } from '../catalog.js';
import {
  ORDER_SENSITIVE_AGGREGATE,
  PARTIAL,
  PARTIAL_STRICT,
  SCALAR,
  SET_RETURNING,
  TOTAL,
  TOTAL_STRICT,
  sameFacts,
  scalar,
  type PgFunctionFacts,
} from './facts.js';

/** Postgres functions written outside the builders of functions.ts, and by whom. */
const EMITTED_BY_TRANSLATOR: Readonly<Record<string, PgFunctionFacts>> = {
  // pg.atUtc / pg.atZone: time zone conversions everywhere.
  timezone: TOTAL,
  // coerce.ts: TIMESTAMP / DATETIME as STRING, FLOAT64 as INT64, strings and JSON text read as values.
  to_char: PARTIAL,
  regexp_replace: PARTIAL,
  round: SCALAR,
  [TIMESTAMP_FUNCTION]: SCALAR,
  [JSON_FUNCTION]: SCALAR,
  // BYTES from and to STRING (coerce.ts): UTF-8; bytes that are not UTF-8 fail.
  convert_to: TOTAL_STRICT,
  convert_from: PARTIAL_STRICT,
  // CAST(STRING AS INT64) with hexadecimal text, SAFE_CAST from STRING (migrations/1764100000000_bigquery-string-functions.js).
  [INT64_FUNCTION]: PARTIAL,
  ...Object.fromEntries(Object.values(SAFE_FUNCTIONS).map((name) => [name, TOTAL_STRICT])),
  // RANGE<…> from and to STRING (coerce.ts): range literals and CASTs; the bounds of a range as text.
  [RANGE_FUNCTION]: PARTIAL,
  [PARSE_RANGE_FUNCTION]: PARTIAL,
  lower: TOTAL_STRICT,
  upper: TOTAL_STRICT,
  // search.ts: a needle of common words is printed as the scan it is, `strpos(x, 'word') > 0`.
  strpos: TOTAL_STRICT,
  // search.ts: `cardinality(N) = 0 OR fn(x) @> N` for a pattern known when the query runs; the
  // rare-trigram functions (catalog.ts rareTrigramsFunction) are answered by pgFunction itself.
  [SEARCH_INNER_TRIGRAMS]: TOTAL_STRICT,
  [SEARCH_ASCII_WORDS]: TOTAL_STRICT,
  cardinality: SCALAR,
  // resolve/hot.ts: facts of hot leaf columns, constants once planned.
  [HOT_LEAF_EXACT]: TOTAL_STRICT,
  [HOT_LEAF_DENSE]: TOTAL_STRICT,
  // the printer of `extract` nodes; EXTRACT(SECOND / MILLISECOND / MICROSECOND …) in resolve/expressions.ts.
  extract: SCALAR,
  floor: SCALAR,
  mod: SCALAR,
  // STRUCT values (resolve/structs.ts), array literals, UNNEST of arrays (resolve/from.ts, resolve/expressions.ts).
  jsonb_build_object: SCALAR,
  jsonb_build_array: SCALAR,
  to_jsonb: SCALAR,
  jsonb_typeof: SCALAR,
  jsonb_array_elements: SET_RETURNING,
  jsonb_array_elements_text: SET_RETURNING,
  // ARRAY(SELECT …): coalesce(array_agg(…), <empty>).
  coalesce: scalar({ mayFail: false, syntax: true }),
  array_agg: ORDER_SENSITIVE_AGGREGATE,
  jsonb_agg: ORDER_SENSITIVE_AGGREGATE,
  // maxRows under an existing LIMIT (index.ts).
  least: scalar({ mayFail: true, syntax: true }),
};

const CATALOGUE: ReadonlyMap<string, PgFunctionFacts> = build();

function build(): Map<string, PgFunctionFacts> {
  const facts = new Map<string, PgFunctionFacts>();
  const declaredBy = new Map<string, string>();
  const declare = (name: string, f: PgFunctionFacts, by: string): void => {
    const prior = facts.get(name);
    if (prior && !sameFacts(prior, f))
      throw new Error(`Postgres function ${name}: ${by} declares other facts than ${declaredBy.get(name)}`);
    facts.set(name, f);
    declaredBy.set(name, by);
  };
  for (const [name, f] of Object.entries(EMITTED_BY_TRANSLATOR)) declare(name, f, 'the translator');
  for (const [bq, def] of Object.entries(FUNCTIONS)) {
    for (const [name, f] of Object.entries(def.emits)) declare(name, f, `BigQuery ${bq}`);
  }
  return facts;
}

/** Every catalogued name with its facts (for tests that check them against Postgres). */
export function pgFunctionEntries(): IterableIterator<[string, PgFunctionFacts]> {
  return CATALOGUE.entries();
}

/** The facts of a Postgres function; undefined for a name the printer never emits. */
export function pgFunction(name: string): PgFunctionFacts | undefined {
  return CATALOGUE.get(name) ?? (isRareTrigramsFunction(name) ? TOTAL_STRICT : undefined);
}

// The questions the rewrites ask; a name not in the catalogue gets the cautious answer.

export function isAggregate(name: string): boolean {
  return CATALOGUE.get(name)?.kind === 'aggregate';
}

/** A known scalar function: per row, never an aggregate, window or set-returning function. */
export function isScalarFunction(name: string): boolean {
  return CATALOGUE.get(name)?.kind === 'scalar';
}

/** Whether the function may take OVER: window functions and the aggregates that allow it. */
export function takesOver(name: string): boolean {
  const f = CATALOGUE.get(name);
  return f !== undefined && (f.kind === 'window' || (f.kind === 'aggregate' && f.window));
}

/** A window function proper, refused without OVER. */
export function isWindowOnly(name: string): boolean {
  return CATALOGUE.get(name)?.kind === 'window';
}

export function isSetReturning(name: string): boolean {
  return CATALOGUE.get(name)?.kind === 'setReturning';
}

/** Whether the result may depend on input row order when the call has no ORDER BY of its own; true for unknown names. */
export function isOrderSensitive(name: string): boolean {
  const f = CATALOGUE.get(name);
  return f === undefined || f.kind === 'window' || (f.kind === 'aggregate' && f.orderSensitive);
}

/** Whether a call can raise an error for some row; true for everything but scalar functions known to be total. */
export function mayFail(name: string): boolean {
  const f = CATALOGUE.get(name);
  return f?.kind !== 'scalar' || f.mayFail;
}

export function isStrict(name: string): boolean {
  const f = CATALOGUE.get(name);
  return f?.kind === 'scalar' && f.strict;
}

export function evaluatesAllArguments(name: string): boolean {
  const f = CATALOGUE.get(name);
  return f?.kind === 'scalar' && f.evaluatesAllArguments;
}
