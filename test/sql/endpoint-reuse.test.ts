/**
 * A sandboxed translation reuses the endpoint's resolved CTEs for the next caller `sql`
 * (src/sql/index.ts): reuse must never change a translation. A translation after reuse is
 * compared with one of the same endpoint text plus a trailing comment (a new text, so resolved
 * afresh; the comment moves no position).
 */
import assert from 'node:assert/strict';
import { SqlError, initTranslator, translateQuery, type Translation } from '../../src/sql/index.js';
import { LOGS_ALL_SQL } from '../../seeds/queries.js';
import type { SourceLookup, SourceTable } from '../../src/sources/schema.js';
import { sampleSources } from '../support/translation.js';

const sources = sampleSources();

function outcome(query: string, sandboxSql: string, lookup: SourceLookup = sources): Translation | string {
  try {
    return translateQuery({ query, sandboxSql, sources: lookup, maxRows: 1000 });
  } catch (e) {
    if (!(e instanceof SqlError)) throw e;
    return `${e.constructor.name}: ${e.message}\n${e.snippet}`;
  }
}

let fresh = 0;
/** The same endpoint text with a trailing comment no other call used: never reused. */
const unseen = (query: string): string => `${query}\n-- ${++fresh}`;

describe("reuse of an endpoint's resolved CTEs across sandboxed sql", () => {
  before(() => initTranslator());

  const callers = [
    'select count(*) as n from edge_logs',
    'select id from postgres_logs where id = @id and timestamp > @iso_timestamp_start',
    'with mine as (select event_message as m from auth_logs where m like @pattern) select m, @project as p from mine',
    'select r.path, count(*) as n from edge_logs t cross join unnest(t.metadata) m cross join unnest(m.request) r group by r.path',
    'select (select count(*) from edge_logs) as a, (select count(*) from function_logs) as b',
    'with edge_logs as (select 1 as x) select x from edge_logs',
    'select * from `cloudflare.logs.prod`',
    'select nope from edge_logs',
    'select count(*) as n from edge_logs where',
  ];

  it('when many callers query one endpoint in turn, then each translation is what a fresh resolution gives', () => {
    for (let round = 0; round < 2; round++) {
      for (const sql of callers) assert.deepStrictEqual(outcome(LOGS_ALL_SQL, sql), outcome(unseen(LOGS_ALL_SQL), sql), sql);
    }
  });

  it("when a source's schema changes between calls, then the next translation sees the new schema", () => {
    const tables = new Map<string, SourceTable>();
    const base = sources('cloudflare.logs.prod')!;
    tables.set('edge', { ...base, name: 'edge', fields: {} });
    const lookup: SourceLookup = (name) => tables.get(name);
    const endpoint = 'with e as (select t.size as size from edge t) select * from e';
    const caller = 'select size from e';
    const before = outcome(endpoint, caller, lookup) as Translation;
    assert.match(before.warnings[0]?.message ?? '', /unknown field size/, 'edge has no size field yet: read as NULL, with a warning');
    tables.set('edge', { ...base, name: 'edge', fields: { size: { type: 'INT64', repeated: false } } });
    const after = outcome(endpoint, caller, lookup) as Translation;
    assert.deepStrictEqual(after, outcome(unseen(endpoint), caller, lookup));
    assert.deepStrictEqual(after.warnings, []);
    assert.deepStrictEqual(after.columns, [{ name: 'size', type: 'INT64' }]);
  });

  it('when a source appears or goes away between calls, then the next translation follows', () => {
    const tables = new Map<string, SourceTable>();
    const lookup: SourceLookup = (name) => tables.get(name);
    const endpoint = 'with e as (select t.id from edge t) select * from e';
    assert.match(outcome(endpoint, 'select id from e', lookup) as string, /unknown table edge/);
    tables.set('edge', { ...sources('cloudflare.logs.prod')!, name: 'edge' });
    assert.deepStrictEqual(outcome(endpoint, 'select id from e', lookup), outcome(unseen(endpoint), 'select id from e', lookup));
    tables.delete('edge');
    assert.match(outcome(endpoint, 'select id from e', lookup) as string, /unknown table edge/);
  });

  it('when the lookup makes a new table object per call around the same schema (as the service does), then the translation is still right', () => {
    const lookup: SourceLookup = (name) => {
      const table = sources(name);
      return table && { ...table };
    };
    for (const sql of callers) assert.deepStrictEqual(outcome(LOGS_ALL_SQL, sql, lookup), outcome(unseen(LOGS_ALL_SQL), sql, lookup), sql);
  });

  it("when callers use parameters, then each numbering continues after the endpoint's own and starts over for the next caller", () => {
    const a = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: 'select id from edge_logs where id = @a', sources });
    const b = translateQuery({ query: LOGS_ALL_SQL, sandboxSql: 'select id from edge_logs where id = @b or id = @a', sources });
    assert.deepStrictEqual(a.parameters, ['project', 'iso_timestamp_start', 'iso_timestamp_end', 'a']);
    assert.deepStrictEqual(b.parameters, ['project', 'iso_timestamp_start', 'iso_timestamp_end', 'b', 'a']);
  });
});
