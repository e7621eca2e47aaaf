/**
 * Wall 3 on its own, with the reader's own login (src/db/readerPool.ts): SQL that got past walls
 * 1 and 2 and switched the role back with set_config still cannot read the service's tables.
 */
import assert from 'node:assert/strict';
import { executeReadOnly } from '../../src/query/execute.js';
import { READER_ROLE } from '../../src/db/readOnlySession.js';
import { testDatabase } from '../support/db.js';

describe('the reader login (wall 3 on its own)', () => {
  it('when the service starts on Postgres, then endpoint queries log in as the reader role', async () => {
    const { context } = await testDatabase();
    assert.ok(context.reader, 'a reader pool is open');
    const run = await executeReadOnly(context.reader, 'SELECT current_user, session_user', [], { timeoutMs: 1000, useReaderRole: false });
    assert.deepEqual(run.rows, [[READER_ROLE, READER_ROLE]]);
  });

  it("when SQL resets the role with set_config('role', 'none') and then reads a service table, then permission is denied", async () => {
    const { context } = await testDatabase();
    const escape = "SELECT set_config('role', 'none', true), query_to_xml('SELECT key_hash FROM api_keys', true, true, '')";
    await assert.rejects(
      executeReadOnly(context.reader!, escape, [], { timeoutMs: 1000, useReaderRole: false }),
      (e: { code?: string }) => e.code === '42501',
    );
  });

  it('when the reader writes, then the read-only transaction and the missing grant refuse it', async () => {
    const { context } = await testDatabase();
    await assert.rejects(
      executeReadOnly(context.reader!, "SELECT query_to_xml('DELETE FROM logs.pgbouncer_logs_prod RETURNING 1', true, true, '')", [], {
        timeoutMs: 1000,
        useReaderRole: false,
      }),
      (e: { code?: string }) => ['25006', '42501', '0A000'].includes(e.code ?? ''), // read-only, no grant, or no writes in a stable function
    );
  });
});
