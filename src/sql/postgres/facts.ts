/**
 * What the rewrites and wall 2 need to know about a Postgres function the printer may call. The
 * catalogue (functions.ts) maps each such name to its facts; the BigQuery entries of functions.ts
 * declare the Postgres functions they emit with these facts (`emits`).
 *
 * A fact that makes a rewrite bolder (cannot fail, strict, evaluates all its arguments, order does
 * not matter) is claimed explicitly; the constructors default to the cautious answer, and a name
 * the catalogue does not know gets the cautious answer to every question.
 */

/** One value per row, computed from that row's values. */
export interface ScalarFacts {
  readonly kind: 'scalar';
  /**
   * Whether it can raise an error for some row with the arguments the translator gives it
   * (narrow.ts computes row values for rows a guard would have dropped only when none can).
   * `timezone` counts as total: its zone is 'UTC' or one value for all rows, and an unknown zone
   * fails every row alike; `date_trunc`'s unit is a literal from a fixed list.
   */
  readonly mayFail: boolean;
  /** NULL whenever an argument is NULL (resolve/from.ts drops an UNNEST guard that a strict condition implies). */
  readonly strict: boolean;
  /** Computes every argument on every call, unlike COALESCE (narrow.ts may then compute the arguments for every row). */
  readonly evaluatesAllArguments: boolean;
  /** Postgres parses it as an expression (COALESCE, GREATEST, LEAST, NULLIF), not as a call of a function in pg_proc. */
  readonly syntax: boolean;
}

/** Computes one value from the rows of a group. */
export interface AggregateFacts {
  readonly kind: 'aggregate';
  /**
   * The result depends on the order of the input rows unless the call has its own ORDER BY
   * (`array_agg`, `string_agg`, `jsonb_agg`). Floating-point sums and variances are treated as
   * order-free, as BigQuery does not promise their last bits either.
   */
  readonly orderSensitive: boolean;
  /** Takes OVER (ordered-set aggregates such as `percentile_disc` do not). */
  readonly window: boolean;
}

/** A window function proper (`row_number`, `lag`, …): needs OVER, and its numbering, ties and frames follow input order. */
export interface WindowFunctionFacts {
  readonly kind: 'window';
}

/** Returns rows: allowed only as `LATERAL f(…) AS alias(column)` in FROM. */
export interface SetReturningFacts {
  readonly kind: 'setReturning';
}

export type PgFunctionFacts = ScalarFacts | AggregateFacts | WindowFunctionFacts | SetReturningFacts;

/** A scalar function; claims not made are false (the cautious answer). */
export function scalar(facts: { mayFail: boolean; strict?: boolean; evaluatesAllArguments?: boolean; syntax?: boolean }): ScalarFacts {
  return Object.freeze({
    kind: 'scalar',
    mayFail: facts.mayFail,
    strict: facts.strict ?? false,
    evaluatesAllArguments: facts.evaluatesAllArguments ?? false,
    syntax: facts.syntax ?? false,
  });
}

export function aggregate(facts: { orderSensitive: boolean; window: boolean }): AggregateFacts {
  return Object.freeze({ kind: 'aggregate', orderSensitive: facts.orderSensitive, window: facts.window });
}

// ── the usual combinations ──

/** No claims: may fail, may skip arguments, not known strict. */
export const SCALAR = scalar({ mayFail: true });
/** Cannot fail, strict, evaluates all its arguments: `lower`, `length`, `strpos`, … */
export const TOTAL_STRICT = scalar({ mayFail: false, strict: true, evaluatesAllArguments: true });
/** Strict and evaluates all its arguments, but may fail: `substr` with a negative length, `substring` with a bad pattern, … */
export const PARTIAL_STRICT = scalar({ mayFail: true, strict: true, evaluatesAllArguments: true });
/** Cannot fail and evaluates all its arguments: `date_trunc`, `timezone`. */
export const TOTAL = scalar({ mayFail: false, evaluatesAllArguments: true });
/** Evaluates all its arguments, may fail: `to_char`, `regexp_replace`. */
export const PARTIAL = scalar({ mayFail: true, evaluatesAllArguments: true });
/** An aggregate whose result does not depend on row order, usable with OVER: `count`, `sum`, `stddev_samp`, … */
export const AGGREGATE = aggregate({ orderSensitive: false, window: true });
/** An aggregate that collects rows in input order unless given its own ORDER BY: `array_agg`, `string_agg`, `jsonb_agg`. */
export const ORDER_SENSITIVE_AGGREGATE = aggregate({ orderSensitive: true, window: true });
export const WINDOW_FUNCTION: WindowFunctionFacts = Object.freeze({ kind: 'window' });
export const SET_RETURNING: SetReturningFacts = Object.freeze({ kind: 'setReturning' });

/** Whether two declarations of one name agree (functions.ts refuses a name declared with different facts). */
export function sameFacts(a: PgFunctionFacts, b: PgFunctionFacts): boolean {
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => x[k] === y[k]);
}
