import assert from 'node:assert/strict';
import { SqlSyntaxError, queryCtes, queryParameters } from '../../src/sql/index.js';
import { LOGS_ALL_SQL, USAGE_API_COUNTS_SQL } from '../../seeds/queries.js';

describe('queryParameters and queryCtes', () => {
  it('when a query uses @names, then the distinct names in first-use order', () => {
    assert.deepStrictEqual(queryParameters(USAGE_API_COUNTS_SQL), ['interval', 'project']);
    assert.deepStrictEqual(queryParameters(LOGS_ALL_SQL), ['project', 'iso_timestamp_start', 'iso_timestamp_end']);
  });

  it('when @ appears in strings or comments, then it is not a parameter', () => {
    assert.deepStrictEqual(queryParameters('select \'@no\', "@nope" -- @none\n, @yes /* @x */'), ['yes']);
  });

  it('when the query does not lex, then SqlSyntaxError', () => {
    assert.throws(() => queryParameters("select 'open"), SqlSyntaxError);
  });

  it('when a query has a WITH clause, then its CTE names in order', () => {
    assert.deepStrictEqual(queryCtes(LOGS_ALL_SQL), [
      'edge_logs',
      'postgres_logs',
      'function_edge_logs',
      'function_logs',
      'auth_logs',
      'realtime_logs',
      'storage_logs',
      'postgrest_logs',
      'pgbouncer_logs',
      'supavisor_logs',
      'pg_upgrade_logs',
      'etl_replication_logs',
      'multigres_logs',
      'auth_audit_logs',
      'supamonitor_logs',
    ]);
    assert.deepStrictEqual(queryCtes('select 1'), []);
  });
});
