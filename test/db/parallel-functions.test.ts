/**
 * migrations/1764850000000_subtransaction-functions-parallel-restricted.js: the `logs` functions
 * with an EXCEPTION block start a subtransaction, which a parallel worker refuses; a query whose
 * plan goes parallel must still answer.
 */
import assert from 'node:assert/strict';
import { testDatabase } from '../support/db.js';

describe('Functions with an EXCEPTION block in a parallel plan', function () {
  this.timeout(60_000);

  it('when the planner runs a scan in parallel workers, then logs.bq_json over its rows answers (it runs in the leader), as it does serially', async () => {
    const { pool } = await testDatabase();
    const table = `public.parallel_bq_json_${process.pid}`;
    await pool.query(`CREATE TABLE ${table} AS SELECT CASE WHEN i % 3 = 0 THEN 'not json ' || i ELSE '{"a": ' || i || '}' END AS x
                        FROM generate_series(1, 20000) i`);
    await pool.query(`ANALYZE ${table}`);
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Any plan Postgres can run in parallel, it does here.
      for (const setting of [
        'parallel_setup_cost = 0',
        'parallel_tuple_cost = 0',
        'min_parallel_table_scan_size = 0',
        'max_parallel_workers_per_gather = 2',
      ])
        await client.query(`SET LOCAL ${setting}`);
      const query = `SELECT count(*)::int AS n FROM ${table} WHERE logs.bq_json(x) IS NULL`;
      const safe = await client.query(`SELECT proparallel FROM pg_proc WHERE oid = 'logs.bq_json(text)'::regprocedure`);
      assert.equal(safe.rows[0].proparallel, 'r', 'PARALLEL RESTRICTED');
      assert.deepEqual((await client.query(query)).rows, [{ n: 6666 }]);
      // As it was declared before (PARALLEL SAFE), the same query in the same settings fails: what the migration fixes.
      await client.query('SAVEPOINT before');
      await client.query('ALTER FUNCTION logs.bq_json(text) PARALLEL SAFE');
      const plan = (await client.query(`EXPLAIN ${query}`)).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      assert.match(plan, /Gather/);
      await assert.rejects(client.query(query), { code: '25000', message: /cannot start subtransactions during a parallel operation/ });
      await client.query('ROLLBACK TO SAVEPOINT before');
    } finally {
      await client.query('ROLLBACK');
      client.release();
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });
});
