/**
 * The translator's side of endpoints reading endpoints (src/sql/resolve/endpoints.ts): a named
 * endpoint is a derived table over its own text, after CTEs and sources; parameters are shared
 * by name; cycles and depth are SqlNestingError; a caller's sandboxed `sql` cannot name an
 * endpoint; wall 2 accepts the printed SQL; the reused endpoint CTEs of index.ts follow a change
 * of a read endpoint's text.
 */
import assert from 'node:assert/strict';
import {
  initTranslator,
  SqlNameError,
  SqlNestingError,
  SqlSandboxError,
  translateQuery,
  validatePostgres,
  type EndpointLookup,
} from '../../src/sql/index.js';
import { queryTables } from '../../src/sql/tables.js';
import { sampleSources } from '../support/translation.js';
import { MAX_ENDPOINT_DEPTH } from '../../src/inputLimits.js';

describe('SQL: endpoints read as tables', () => {
  const sources = sampleSources();
  before(() => initTranslator());

  const lookupOf =
    (texts: Record<string, string>): EndpointLookup =>
    (name) =>
      texts[name] === undefined ? undefined : { name, query: texts[name] };
  const texts = {
    base: 'with x as (select timestamp as date, event_message from `postgres.logs` where project = @project) select date, event_message from x',
    mid: 'select date from base where event_message like @pattern',
  };

  it('when an endpoint is named, then it is a derived table over its own text and parameters are shared by name', () => {
    const t = translateQuery({
      query: 'select count(*) as n from mid m where m.date > @since and @project is not null',
      sources,
      endpoints: lookupOf(texts),
      endpointName: 'top',
    });
    assert.deepEqual(t.parameters, ['project', 'pattern', 'since']);
    assert.match(t.sql, /FROM \(SELECT .*\nFROM \(WITH "x" AS/s);
    assert.equal((t.sql.match(/\$1::text/g) ?? []).length, 2, '@project is one $n');
    validatePostgres(t.sql);
  });

  it('when a name is a CTE or a source, then that comes before an endpoint of the same name', () => {
    const lookup = lookupOf({ x: 'select 1 as y', 'postgres.logs': 'select 1 as y' });
    const cte = translateQuery({ query: 'with x as (select 2 as z) select z from x', sources, endpoints: lookup });
    assert.doesNotMatch(cte.sql, /SELECT 1/);
    const source = translateQuery({ query: 'select id from `postgres.logs`', sources, endpoints: lookup });
    assert.match(source.sql, /"logs"\."postgres_logs"/);
  });

  it('when the endpoint text reads the outer CTEs, then it does not see them', () => {
    assert.throws(
      () => translateQuery({ query: 'with c as (select 1 as a) select * from e', sources, endpoints: lookupOf({ e: 'select a from c' }) }),
      (err: Error) => err instanceof SqlNameError && /endpoint e cannot be read: unknown table c/.test(err.message),
    );
  });

  it('when endpoints read each other, then SqlNestingError names the chain at the outer reference', () => {
    const lookup = lookupOf({ a: 'select * from b', b: 'select  * from a', s: 'select * from s' });
    assert.throws(
      () => translateQuery({ query: 'select * from b', sources, endpoints: lookup, endpointName: 'a' }),
      (err: Error) =>
        err instanceof SqlNestingError &&
        err.message === 'endpoints read each other in a cycle: a → b → a (line 1, column 15)' &&
        err.chain.join() === 'a,b,a',
    );
    assert.throws(() => translateQuery({ query: 'select * from s', sources, endpoints: lookup, endpointName: 's' }), /cycle: s → s/);
    assert.throws(() => translateQuery({ query: 'select * from a', sources, endpoints: lookup }), /cycle: a → b → a/);
  });

  it(`when endpoints nest more than ${MAX_ENDPOINT_DEPTH} levels, then SqlNestingError`, () => {
    const chain: Record<string, string> = { e0: 'select id from `postgres.logs`' };
    for (let i = 1; i <= 7; i++) chain[`e${i}`] = `select id from e${i - 1}`;
    translateQuery({ query: `select id from e${MAX_ENDPOINT_DEPTH - 1}`, sources, endpoints: lookupOf(chain) });
    assert.throws(
      () => translateQuery({ query: `select id from e${MAX_ENDPOINT_DEPTH}`, sources, endpoints: lookupOf(chain), endpointName: 'top' }),
      (err: Error) =>
        err instanceof SqlNestingError &&
        err.message.startsWith('endpoints are nested more than 5 levels deep: top → e5 → e4 → e3 → e2 → e1 → e0'),
    );
  });

  it('when no endpoint lookup is given, then an endpoint name is an unknown table', () => {
    assert.throws(() => translateQuery({ query: 'select * from mid', sources }), SqlNameError);
  });

  it('when sandboxed sql names an endpoint, then SqlSandboxError; the endpoint CTEs may read one', () => {
    const endpoint = 'with m as (select date from mid) select * from m';
    const ok = translateQuery({ query: endpoint, sources, endpoints: lookupOf(texts), sandboxSql: 'select count(*) as n from m' });
    validatePostgres(ok.sql);
    for (const sql of [
      'select * from mid',
      'select * from base',
      'with y as (select * from base) select * from y',
      'select (select count(*) from mid) as n from m',
    ]) {
      assert.throws(() => translateQuery({ query: endpoint, sources, endpoints: lookupOf(texts), sandboxSql: sql }), SqlSandboxError, sql);
    }
  });

  it('when a read endpoint changes, then the reused endpoint CTEs of a sandboxed translation follow it', () => {
    const endpoint = 'with m as (select date from mid) select * from m';
    const before = translateQuery({ query: endpoint, sources, endpoints: lookupOf(texts), sandboxSql: 'select * from m' });
    const changed = { ...texts, mid: 'select date from base where event_message not like @pattern' };
    const after = translateQuery({ query: endpoint, sources, endpoints: lookupOf(changed), sandboxSql: 'select * from m' });
    assert.doesNotMatch(before.sql, /NOT LIKE/);
    assert.match(after.sql, /NOT LIKE/);
    assert.throws(() => translateQuery({ query: endpoint, sources, sandboxSql: 'select * from m' }), SqlNameError);
  });

  it('when table names are listed from the parse tree, then every FROM at any depth and every CTE is found', () => {
    assert.deepEqual(queryTables('with A as (select * from `x.y`) select * from a join b using (id) where exists (select 1 from c)'), {
      tables: ['x.y', 'a', 'b', 'c'],
      ctes: ['a'],
    });
  });
});
