/**
 * Translation tests run the translated SQL on the real Postgres and compare rows:
 *
 *   await expectTranslation('select 7 / 2 as x').toReturn([{ x: 3.5 }]);
 *   await expectTranslation('select pg_sleep(1)').toFail(SqlNameError, /unknown function pg_sleep/);
 *
 * Values are normalised by the translation's BigQuery column types: INT64 / FLOAT64 / NUMERIC →
 * number, TIMESTAMP → ISO string with Z, BYTES → base64, DATETIME → `YYYY-MM-DDTHH:MM:SS[.ffffff]`, DATE → `YYYY-MM-DD`,
 * RANGE → the service's string (`[2020-01-01, UNBOUNDED)`, TIMESTAMP bounds in unix microseconds).
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { initTranslator, translateQuery, type Translation } from '../../src/sql/index.js';
import type { SqlErrorClass } from '../../src/sql/errors.js';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { defaultSourceSchema } from '../../src/ingest/defaultSchemas.js';
import { tableNameForSource, type SourceLookup, type SourceTable } from '../../src/sources/schema.js';
import type { SearchHours } from '../../src/sql/catalog.js';
import { loadSources, testDatabase } from './db.js';
import { rangeEncoder } from '../../src/query/encode.js';

/**
 * The start of the clock hour before the one this process started in. One base for the whole run:
 * read at each call, a test that wrote its rows at 06:59 and computed the rows it expects at 07:00
 * compared 05:00:02 with 06:00:02 (a CI run failed so).
 */
const LAST_HOUR_START_MS = Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000;

/** An ISO timestamp `ms` after LAST_HOUR_START_MS: the rows a test writes this way all fall in one hour, a recent one. */
export function inLastHour(ms: number): string {
  return new Date(LAST_HOUR_START_MS + ms).toISOString();
}

export interface TranslationOptions {
  /** Parameter values by name; a parameter not given is bound as NULL, as the service does. */
  params?: Record<string, string | null>;
  sandboxSql?: string;
  maxRows?: number;
  /** Session TimeZone while the query runs (the service uses UTC; tests also try others). */
  timeZone?: string;
  sources?: SourceLookup;
  /** false: without the rewrites for speed (the differential test compares both). */
  optimise?: boolean;
  /** The database to run on (default: the shared test database). */
  pool?: pg.Pool;
  /** The search hours of the translation (src/sql/catalog.ts searchHoursAt); default none. */
  searchHours?: SearchHours;
}

type Row = Record<string, unknown>;

/** int8, numeric, timestamp, timestamptz and date come back as Postgres text, so normalise() sees exact values. */
const RAW_TYPES = new Set([20, 1700, 1114, 1184, 1082]);
const rawText = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    RAW_TYPES.has(oid) ? (value: string) => value : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

export function expectTranslation(bq: string, options: TranslationOptions = {}) {
  return {
    async toReturn(expected: Row[]): Promise<Translation> {
      const { rows, translation } = await runTranslation(bq, options);
      assert.deepStrictEqual(rows, expected, `rows of:\n${translation.sql}`);
      return translation;
    },
    async toFail(errorClass: SqlErrorClass, message: RegExp): Promise<void> {
      await initTranslator();
      const sources = options.sources ?? (await loadSources());
      assert.throws(
        () => translateQuery({ query: bq, sources, sandboxSql: options.sandboxSql, maxRows: options.maxRows }),
        (e: unknown) => {
          assert.ok(
            e instanceof errorClass,
            `expected ${errorClass.name}, got ${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`,
          );
          assert.match((e as Error).message, message);
          return true;
        },
      );
    },
  };
}

/** Translates and runs a query; rows normalised by column type. */
export async function runTranslation(bq: string, options: TranslationOptions = {}): Promise<{ rows: Row[]; translation: Translation }> {
  await initTranslator();
  const pool = options.pool ?? (await testDatabase()).pool;
  const sources = options.sources ?? (await loadSources());
  const translation = translateQuery({
    query: bq,
    sources,
    sandboxSql: options.sandboxSql,
    maxRows: options.maxRows,
    optimise: options.optimise,
    searchHours: options.searchHours,
  });
  const values = translation.parameters.map((name) => options.params?.[name] ?? null);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL TimeZone = '${(options.timeZone ?? 'UTC').replace(/'/g, "''")}'`);
    // As the service runs queries (src/query/execute.ts): plans without the rewrites for speed
    // are estimated dear enough for JIT, which then spends far longer compiling than running.
    await client.query('SET LOCAL jit = off');
    const result = await client.query({ text: translation.sql, values, types: rawText });
    const rows = result.rows.map((row: Row) => normaliseRow(row, translation.columns));
    return { rows, translation };
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

function normaliseRow(row: Row, columns: Translation['columns']): Row {
  const out: Row = {};
  for (const { name, type } of columns) out[name] = normalise(row[name], type);
  return out;
}

function normalise(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'INT64':
    case 'FLOAT64':
    case 'NUMERIC':
      return Number(value);
    case 'TIMESTAMP':
      return new Date(
        (value as string) // text: RAW_TYPES
          .replace(' ', 'T')
          .replace(/([+-]\d\d)$/, '$1:00'),
      ).toISOString();
    case 'DATETIME':
      return (value as string).replace(' ', 'T');
    case 'BYTES':
      return (value as Buffer).toString('base64');
    default: {
      // RANGE<…> and arrays of them: what the service answers (src/query/encode.ts), `[2020-01-01, UNBOUNDED)`.
      const range = rangeEncoder(type);
      return range ? range(value as string) : value;
    }
  }
}

/** An ISO timestamp `minutes` before now, truncated to the minute plus `seconds`; for fixtures at known times. */
export function minutesAgo(minutes: number, seconds = 0): string {
  const base = Math.floor(Date.now() / 60_000) * 60_000;
  return new Date(base - minutes * 60_000 + seconds * 1000).toISOString();
}

/**
 * The default sources with the schemas the service gives them before any event
 * (src/ingest/defaultSchemas.ts), for tests and benchmarks that translate without a database
 * (fuzzing, timing). Table names follow tableNameForSource.
 */
export function sampleSources(): SourceLookup {
  const byName = new Map<string, SourceTable>();
  for (const { name } of DEFAULT_SOURCES)
    byName.set(name, { name, pgSchema: 'logs', table: tableNameForSource(name), fields: defaultSourceSchema(name) });
  return (name) => byName.get(name);
}
