import assert from 'node:assert/strict';
import { dropExpiredPartitions, ensurePartitions, listPartitions, partitionName } from '../../src/storage/logTables.js';
import { insertEvents, testDatabase } from '../support/db.js';

const DAY = 86_400_000;

describe('log table partitions', () => {
  it('when the service starts, then every default source has daily partitions from today to two days ahead', async () => {
    const { context } = await testDatabase();
    const now = Date.now();
    await context.upkeep.runPartitionUpkeep(now);
    for (const source of context.sources.list()) {
      const names = (await listPartitions(context.db.pool, source.table_name)).map((p) => p.name);
      for (let d = 0; d <= 2; d++) {
        const expected = partitionName(source.table_name, Math.floor((now + d * DAY) / DAY) * DAY);
        assert.ok(names.includes(expected), `${source.name}: missing ${expected} in ${names.join(', ')}`);
      }
    }
  });

  it('when an event is ingested for a day without a partition, then the partition is created on demand and holds the row', async () => {
    const { context, pool } = await testDatabase();
    const source = await context.sources.get('pgbouncer.logs.prod');
    const day = Math.floor((Date.now() - 5 * DAY) / DAY) * DAY;
    const name = partitionName(source.table_name, day);
    assert.ok(!(await listPartitions(pool, source.table_name)).some((p) => p.name === name), 'precondition: no partition yet');
    await insertEvents('pgbouncer.logs.prod', [
      { event_message: 'on demand', project: 'partitions-test', timestamp: new Date(day + 3_600_000).toISOString() },
    ]);
    const { rows } = await pool.query(`SELECT event_message FROM logs."${name}" WHERE project = 'partitions-test'`);
    assert.deepEqual(rows, [{ event_message: 'on demand' }]);
  });

  it('when partitions are older than the retention, then upkeep drops them and keeps the rest', async () => {
    const { context, pool } = await testDatabase();
    const source = await context.sources.create({ name: 'retention.test', retention_days: 3 });
    const now = Date.now();
    await ensurePartitions(pool, source.table_name, now - 6 * DAY, now);
    const dropped = await dropExpiredPartitions(pool, source.table_name, 3, now);
    const today = Math.floor(now / DAY) * DAY;
    assert.deepEqual(dropped.sort(), [6, 5, 4].map((d) => partitionName(source.table_name, today - d * DAY)).sort());
    const left = (await listPartitions(pool, source.table_name)).map((p) => p.name);
    assert.ok(left.includes(partitionName(source.table_name, today - 3 * DAY)), 'the partition inside the retention stays');
    assert.ok(left.includes(partitionName(source.table_name, today)));
    await context.sources.delete(source.id);
  });

  it('when psql lists logs tables, then they have readable names', async () => {
    const { pool } = await testDatabase();
    const { rows } = await pool.query(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'logs' AND c.relkind = 'p' ORDER BY 1`,
    );
    const names = rows.map((r) => r.relname);
    for (const t of [
      'cloudflare_logs_prod',
      'postgres_logs',
      'deno_relay_logs',
      'deno_subhosting_events',
      'gotrue_logs_prod',
      'realtime_logs_prod',
      'storage_logs_prod_2',
      'postgrest_logs_prod',
      'pgbouncer_logs_prod',
    ]) {
      assert.ok(names.includes(t), `missing logs.${t} in ${names.join(', ')}`);
    }
  });
});
