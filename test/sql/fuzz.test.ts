import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SqlError, SqlLimitError, initTranslator, translateQuery } from '../../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';
import { parseQuery } from '../../src/sql/parser.js';
import { sampleSources } from '../support/translation.js';

const sources = sampleSources();

const VOCABULARY = [
  'select',
  'from',
  'where',
  'group',
  'by',
  'order',
  'limit',
  'offset',
  'having',
  'with',
  'as',
  'union',
  'all',
  'distinct',
  'join',
  'left',
  'cross',
  'inner',
  'on',
  'using',
  'unnest',
  'case',
  'when',
  'then',
  'else',
  'end',
  'cast',
  'safe_cast',
  'int64',
  'string',
  'timestamp',
  'interval',
  'hour',
  'day',
  'and',
  'or',
  'not',
  'in',
  'is',
  'null',
  'true',
  'between',
  'like',
  'exists',
  'extract',
  'count',
  'countif',
  'sum',
  'regexp_contains',
  'timestamp_trunc',
  'datetime',
  'coalesce',
  'approx_quantiles',
  'offset',
  'safe_offset',
  'pg_sleep',
  'edge_logs',
  'dates',
  't',
  'm',
  'r',
  'metadata',
  'request',
  'path',
  'id',
  'x',
  '`cloudflare.logs.prod`',
  '`deno-relay-logs`',
  'logs.x',
  "'a'",
  '"b"',
  "'\\''",
  '1',
  '2.5',
  '0x1f',
  '@project',
  '@interval',
  '(',
  ')',
  '[',
  ']',
  ',',
  '.',
  ';',
  '*',
  '+',
  '-',
  '/',
  '=',
  '!=',
  '<>',
  '<',
  '>=',
  '||',
  '--',
  '#',
  '/*',
  '*/',
  '`',
  "'",
  '"',
];

/** Accepts only our error family; anything else (TypeError, RangeError, stack overflow) fails the property. */
function translateOrSqlError(query: string, sandboxSql?: string): void {
  try {
    translateQuery({ query, sources, sandboxSql, maxRows: 1000 });
  } catch (e) {
    if (!(e instanceof SqlError)) throw e;
  }
}

describe('fuzzing the translator', function () {
  this.timeout(20_000);
  before(() => initTranslator());

  it('when given random token streams, then only SqlError subclasses are thrown', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 40 }), (tokens) => {
        translateOrSqlError(tokens.join(' '));
        translateOrSqlError(`select ${tokens.join(' ')}`);
      }),
      { numRuns: 3000 },
    );
  });

  it('when the seeded queries are mutated, then only SqlError subclasses are thrown', () => {
    const mutation = fc.record({
      query: fc.constantFrom(USAGE_API_COUNTS_SQL, LOGS_ALL_SQL),
      at: fc.nat(),
      cut: fc.nat({ max: 12 }),
      insert: fc.oneof(fc.constantFrom(...VOCABULARY), fc.string({ maxLength: 4 })),
    });
    fc.assert(
      fc.property(mutation, ({ query, at, cut, insert }) => {
        const i = at % query.length;
        const mutated = query.slice(0, i) + insert + query.slice(i + cut);
        translateOrSqlError(mutated);
        translateOrSqlError(LOGS_ALL_SQL, mutated);
      }),
      { numRuns: 1500 },
    );
  });

  it('when given arbitrary text as sandboxed sql, then only SqlError subclasses are thrown', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        translateOrSqlError(LOGS_ALL_SQL, `select ${text} from edge_logs`);
      }),
      { numRuns: 1000 },
    );
  });

  it('when 10,000 parentheses nest, then SqlLimitError', () => {
    const deep = `select ${'('.repeat(10_000)}1${')'.repeat(10_000)}`;
    assert.throws(() => parseQuery(deep), SqlLimitError);
    assert.throws(() => translateQuery({ query: 'with a as (select 1 as x) select x from a', sources, sandboxSql: deep }), SqlLimitError);
  });
});
