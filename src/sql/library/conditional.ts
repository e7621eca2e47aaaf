/**
 * BigQuery's conditional expressions that are called like functions (its reference, "Conditional
 * expressions"; CASE is syntax, resolve/expressions.ts). Values meeting in one result are brought
 * to one type (coerce.ts, unifyAll).
 */
import { adapt, commonType, compared, unifyAll } from '../coerce.js';
import type { FunctionDef } from '../functions.js';
import { pg } from '../postgres/ast.js';
import { scalar as scalarFacts, type PgFunctionFacts } from '../postgres/facts.js';
import { BOOL, typed } from '../types.js';
import { args, def, defWith, numberArg } from './define.js';

const COALESCE = scalarFacts({ mayFail: false, syntax: true });
const NULLIF = scalarFacts({ mayFail: true, syntax: true });

/** A Postgres function over arguments unified to one common type (coalesce). */
function variadic(pgName: string, facts: PgFunctionFacts, min: number, max: number): FunctionDef {
  return defWith(
    def(min, max, { [pgName]: facts }, (s) => {
      const values = unifyAll(args(s), s.text, s.call.pos);
      return typed(
        pg.func(
          pgName,
          values.map((v) => v.sql),
        ),
        commonType(values),
      );
    }),
    { safe: 'same' },
  );
}

export const CONDITIONAL_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  coalesce: variadic('coalesce', COALESCE, 1, 100),
  ifnull: variadic('coalesce', COALESCE, 2, 2),
  if: defWith(
    def(3, 3, {}, (s) => {
      const [then, otherwise] = unifyAll([s.arg(1), s.arg(2)], s.text, s.call.pos);
      return typed(pg.case([{ when: adapt(s.arg(0), BOOL).sql, then: then.sql }], otherwise.sql), commonType([then, otherwise]));
    }),
    { safe: 'same' },
  ),
  nullif: defWith(
    def(2, 2, { nullif: NULLIF }, (s) => {
      const [a, b] = compared(s.arg(0), s.arg(1), 'NULLIF', s.text, s.call.pos);
      return typed(pg.func('nullif', [a.sql, b.sql]), a.type);
    }),
    { safe: 'same' },
  ),
  // NULLIFZERO(x): NULL for 0; ZEROIFNULL(x): 0 for NULL. Numbers only, of the argument's type.
  nullifzero: defWith(
    def(1, 1, { nullif: NULLIF }, (s) => {
      const v = numberArg(s, 0);
      return typed(pg.func('nullif', [v.sql, pg.number('0')]), v.type);
    }),
    { safe: 'same' },
  ),
  zeroifnull: defWith(
    def(1, 1, { coalesce: COALESCE }, (s) => {
      const v = numberArg(s, 0);
      return typed(pg.func('coalesce', [v.sql, pg.number('0')]), v.type);
    }),
    { safe: 'same' },
  ),
};
