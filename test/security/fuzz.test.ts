/**
 * Property tests of the sandbox (bounded: well under 30 s in all):
 * - random text and hostile token soups into translateQuery, sandboxed and not, throw only
 *   SqlError subclasses and finish in under a second each;
 * - whatever translateQuery accepts passes validatePostgres again;
 * - generated valid sandbox queries, and mutations of them with hostile tokens, never produce SQL
 *   whose caller part reads anything but a CTE (checked on the real Postgres parse tree).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseSync } from 'libpg-query';
import { SqlError, initTranslator, translateQuery, validatePostgres, type Translation } from '../../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { sampleSources } from '../support/translation.js';
import { FORBIDDEN_SQL, LOGS_ALL_CTES } from './corpus.js';

const sources = sampleSources();
const ENDPOINT_CTES = new Set<string>(LOGS_ALL_CTES);

const HOSTILE_TOKENS = [
  'api_keys',
  'public.api_keys',
  '`public.api_keys`',
  'endpoints',
  'sources',
  'pgmigrations',
  'pg_class',
  'pg_catalog.pg_proc',
  'information_schema.tables',
  '`cloudflare.logs.prod`',
  'logs.cloudflare_logs_prod',
  '`logs.cloudflare_logs_prod`',
  '"logs"',
  'pg_sleep(1)',
  "pg_read_file('/etc/passwd')",
  "set_config('role','postgres',true)",
  "current_setting('x')",
  'txid_current()',
  'generate_series(1,9)',
  "repeat('a',9)",
  'version()',
  "'x'::regclass",
  'cast(1 as regclass)',
  ';',
  '--',
  '#',
  '/*',
  '*/',
  "'",
  '"',
  '`',
  '\\',
  '$$',
  "E'",
  'U&',
  '@project',
  '@foo',
  'for update',
  'into t',
  'with recursive',
  'delete from',
  'insert into',
  'update',
  'drop table',
  'select',
  'from',
  'where',
  'union all',
  'join',
  'on true',
  'lateral',
  'exists',
  '(',
  ')',
  ',',
  '.',
  '*',
  'as',
  'x',
  'id',
  'edge_logs',
  'auth_logs',
  'metadata',
  'unnest(metadata)',
  '\u0000',
  '\u202e',
  '🦄',
];

/**
 * Runs one translation; only SqlError may escape, and it must be quick: under 1 s of this process's
 * CPU, which a loaded machine does not stretch as it stretches wall time.
 */
function translate(query: string, sandboxSql?: string): Translation | undefined {
  const started = process.cpuUsage();
  let translation: Translation | undefined;
  try {
    translation = translateQuery({ query, sources, sandboxSql, maxRows: 1000 });
  } catch (e) {
    if (!(e instanceof SqlError)) throw e;
  }
  const cpu = process.cpuUsage(started);
  const ms = (cpu.user + cpu.system) / 1000;
  if (ms > 1_000) throw new Error(`translation took ${ms.toFixed(0)} ms of CPU`);
  return translation;
}

type Json = Record<string, unknown>;

/**
 * Relations read outside the endpoint's own CTE bodies, from Postgres' parse tree: each must be
 * an unqualified name of a CTE of the statement.
 */
function callerRelations(sql: string): { relations: Array<{ schema?: string; name: string }>; ctes: Set<string> } {
  const tree = parseSync(sql) as { stmts: Array<{ stmt: Json }> };
  assert.equal(tree.stmts.length, 1);
  const relations: Array<{ schema?: string; name: string }> = [];
  const ctes = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value as Json)) {
      if (key === 'CommonTableExpr') {
        const cte = child as Json;
        const name = String(cte.ctename);
        ctes.add(name);
        // The endpoint's CTE bodies read log tables by design; the caller cannot change them.
        if (!ENDPOINT_CTES.has(name)) walk(cte.ctequery);
        continue;
      }
      if (key === 'RangeVar') {
        const rv = child as Json;
        relations.push({ schema: rv.schemaname as string | undefined, name: String(rv.relname) });
        continue;
      }
      walk(child);
    }
  };
  walk(tree.stmts[0].stmt);
  return { relations, ctes };
}

function assertReadsOnlyCtes(t: Translation, what: string): void {
  validatePostgres(t.sql);
  const { relations, ctes } = callerRelations(t.sql);
  for (const r of relations) {
    assert.ok(
      r.schema === undefined && ctes.has(r.name),
      `${what} reads ${r.schema ? r.schema + '.' : ''}${r.name}:\n${t.sql.slice(-600)}`,
    );
  }
}

// ── a small generator of valid sandbox queries over the logs.all CTEs ─────────

const cte = fc.constantFrom(...LOGS_ALL_CTES);
const column = fc.constantFrom('id', 'timestamp', 'event_message');
const stringLiteral = fc
  .string({ maxLength: 8 })
  .map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`);
const scalar = fc.oneof(
  column,
  column.map((c) => `t.${c}`),
  stringLiteral,
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom(
    'lower(event_message)',
    'length(event_message)',
    "regexp_contains(event_message, 'a+')",
    'timestamp_trunc(timestamp, hour)',
    "concat(id, '-', event_message)",
    'unix_micros(timestamp)',
    "coalesce(event_message, '')",
    'upper(id)',
    "starts_with(event_message, 'a')",
    'cast(length(id) as string)',
    'safe_cast(event_message as int64)',
    'current_timestamp()',
    "format_timestamp('%Y', timestamp)",
  ),
);
const condition = fc.oneof(
  fc.tuple(column, fc.constantFrom('=', '!=', '<', '>='), stringLiteral).map(([c, op, v]) => `${c} ${op} ${v}`),
  fc.tuple(column, stringLiteral).map(([c, v]) => `${c} like ${v}`),
  column.map((c) => `${c} is not null`),
  fc.tuple(cte, column).map(([x, c]) => `id in (select ${c === 'id' ? 'id' : 'id'} from ${x})`),
  cte.map((x) => `exists (select 1 from ${x})`),
  fc.constant('true'),
);
const selectQuery = fc
  .record({
    items: fc.array(fc.tuple(scalar, fc.nat({ max: 99 })), { minLength: 1, maxLength: 4 }),
    from: cte,
    join: fc.option(cte, { nil: undefined }),
    where: fc.option(condition, { nil: undefined }),
    own: fc.boolean(),
    limit: fc.option(fc.nat({ max: 5000 }), { nil: undefined }),
  })
  .map(({ items, from, join, where, own, limit }) => {
    const list = items.map(([e, i], k) => `${e} as c${k}_${i}`).join(', ');
    const source = own ? 'mine' : from;
    const prefix = own ? `with mine as (select * from ${from}) ` : '';
    const joined = join ? ` join (select id as jid from ${join}) as j on t.id = j.jid` : '';
    return `${prefix}select ${list} from ${source} as t${joined}${where ? ` where ${where.replace(/\b(id|timestamp|event_message)\b(?! in)/, 't.$1')}` : ''}${limit === undefined ? '' : ` limit ${limit}`}`;
  });

describe('security fuzzing of the sandbox', function () {
  this.timeout(30_000);
  before(() => initTranslator());

  it('when random text is the endpoint query or the sandboxed sql, then only SqlError is thrown, each within 1 s', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        translate(text);
        translate(LOGS_ALL_SQL, text);
        translate(USAGE_API_COUNTS_SQL, text);
      }),
      { numRuns: 700 },
    );
  });

  it('when hostile token soups are translated, then only SqlError is thrown and anything accepted reads only CTEs', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...HOSTILE_TOKENS), { minLength: 1, maxLength: 30 }), (tokens) => {
        const soup = tokens.join(' ');
        translate(soup);
        for (const sql of [soup, `select ${soup}`, `select id from edge_logs where ${soup}`]) {
          const t = translate(LOGS_ALL_SQL, sql);
          if (t) assertReadsOnlyCtes(t, sql);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('when a generated valid sandbox query is accepted, then it passes validatePostgres and reads only CTEs', () => {
    let accepted = 0;
    fc.assert(
      fc.property(selectQuery, (sql) => {
        const t = translate(LOGS_ALL_SQL, sql);
        if (!t) return;
        accepted++;
        assertReadsOnlyCtes(t, sql);
      }),
      { numRuns: 250 },
    );
    assert.ok(accepted > 180, `the generator should mostly produce valid queries; ${accepted} of 250 were accepted`);
  });

  it('when valid sandbox queries are mutated with hostile tokens, then nothing accepted reads a non-CTE relation', () => {
    const mutation = fc.record({
      base: selectQuery,
      at: fc.nat(),
      cut: fc.nat({ max: 15 }),
      insert: fc.oneof(
        fc.constantFrom(...HOSTILE_TOKENS).map((t) => ` ${t} `),
        fc.string({ maxLength: 6 }),
      ),
    });
    let accepted = 0;
    fc.assert(
      fc.property(mutation, ({ base, at, cut, insert }) => {
        const i = at % (base.length + 1);
        const mutated = base.slice(0, i) + insert + base.slice(i + cut);
        const t = translate(LOGS_ALL_SQL, mutated);
        if (!t) return;
        accepted++;
        assertReadsOnlyCtes(t, mutated);
      }),
      { numRuns: 1500 },
    );
    assert.ok(accepted > 0);
  });

  it('when forbidden corpus entries are spliced into a valid query, then only SqlError is thrown and nothing forbidden is accepted', () => {
    const forbidden = Object.values(FORBIDDEN_SQL)
      .flat()
      .filter((s) => s.length < 2_000);
    fc.assert(
      fc.property(selectQuery, fc.constantFrom(...forbidden), fc.nat(), (base, attack, at) => {
        const i = at % (base.length + 1);
        for (const sql of [base.slice(0, i) + attack + base.slice(i), `${base} union all ${attack}`, `select * from (${attack}) as s`]) {
          const t = translate(LOGS_ALL_SQL, sql);
          if (t) assertReadsOnlyCtes(t, sql);
        }
      }),
      { numRuns: 300 },
    );
  });
});
