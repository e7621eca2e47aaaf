/**
 * The rewrites and wall 2 trust the function catalogue (src/sql/postgres/functions.ts): an aggregate the
 * catalogue did not know was inlined as a constant and changed the rows. What Postgres itself
 * records about a function (kind, strictness, volatility, set-returning) is checked here against
 * every catalogued name.
 */
import assert from 'node:assert/strict';
import { pgFunctionEntries } from '../../src/sql/postgres/functions.js';
import { testDatabase } from '../support/db.js';

interface Proc {
  kind: string;
  strict: boolean;
  volatility: string;
  retset: boolean;
  aggkind: string | null;
}

describe('the function catalogue against pg_proc', () => {
  let procs: Map<string, Proc[]>;
  before(async () => {
    const { pool } = await testDatabase();
    const { rows } = await pool.query<Proc & { name: string }>(`
      select case n.nspname when 'pg_catalog' then p.proname else n.nspname || '.' || p.proname end as name,
             p.prokind as kind, p.proisstrict as strict, p.provolatile as volatility, p.proretset as retset, a.aggkind
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace left join pg_aggregate a on a.aggfnoid = p.oid
      where n.nspname in ('pg_catalog', 'logs')`);
    procs = new Map();
    for (const row of rows) procs.set(row.name, [...(procs.get(row.name) ?? []), row]);
  });

  it('when each catalogued function is looked up, then Postgres has it with the catalogued kind and strictness', () => {
    for (const [name, facts] of pgFunctionEntries()) {
      const overloads = procs.get(name) ?? [];
      if (facts.kind === 'scalar' && facts.syntax) {
        assert.equal(overloads.length, 0, `${name} is SQL syntax, not a function`);
        continue;
      }
      assert.ok(overloads.length, `${name} is not a function of this Postgres`);
      if (facts.kind === 'window') {
        // rank, dense_rank, … are also hypothetical-set aggregates (WITHIN GROUP), which the printer never writes.
        assert.ok(
          overloads.some((p) => p.kind === 'w'),
          `${name} is a window function`,
        );
        assert.ok(
          overloads.every((p) => p.kind === 'w' || p.aggkind === 'h'),
          `${name} is only a window function`,
        );
        continue;
      }
      for (const p of overloads) {
        switch (facts.kind) {
          case 'scalar':
            assert.equal(p.kind, 'f', `${name} is a plain function`);
            assert.equal(p.retset, false, `${name} returns one value`);
            if (facts.strict) assert.equal(p.strict, true, `${name} is strict`);
            break;
          case 'aggregate':
            assert.equal(p.kind, 'a', `${name} is an aggregate`);
            // Ordered-set aggregates (WITHIN GROUP) take no OVER.
            assert.equal(p.aggkind === 'n', facts.window, `${name} takes OVER: ${facts.window}`);
            break;
          case 'setReturning':
            assert.equal(p.retset, true, `${name} returns a set`);
        }
      }
    }
  });

  it('when volatility is checked, then no catalogued function is volatile (constant CTEs are inlined once per use)', () => {
    for (const [name] of pgFunctionEntries()) {
      for (const p of procs.get(name) ?? []) assert.notEqual(p.volatility, 'v', `${name} is volatile`);
    }
  });
});
