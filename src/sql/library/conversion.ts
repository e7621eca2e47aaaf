/**
 * BigQuery's conversion functions (its reference, "Conversion functions"); CAST and SAFE_CAST are
 * syntax (coerce.ts, castTo). PARSE_NUMERIC / PARSE_BIGNUMERIC follow BigQuery's rules for the
 * text (logs.bq_parse_numeric of migrations/1764100002000_bigquery-net-conversion-functions.js).
 */
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT } from '../postgres/facts.js';
import { scalar, typed, type Typed } from '../types.js';
import { def, stringArg } from './define.js';

/** NUMERIC: 9 decimal digits, under 10^29; BIGNUMERIC: 38 digits, under about 5.79 × 10^38. */
function parseNumeric(scale: number, max: string): FunctionDef {
  const build = (s: CallSite): PgExpr =>
    pg.func('logs.bq_parse_numeric', [stringArg(s, 0), pg.number(String(scale)), pg.cast(pg.literal(max), 'numeric')]);
  return def(1, 1, { 'logs.bq_parse_numeric': PARTIAL_STRICT }, (s): Typed => typed(build(s), scalar('NUMERIC')));
}

export const CONVERSION_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  parse_numeric: parseNumeric(9, '1e29'),
  parse_bignumeric: parseNumeric(38, '578960446186580977117854925043439539266.34992332820282019728792003956564819968'),
};
