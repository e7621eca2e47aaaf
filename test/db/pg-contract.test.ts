/**
 * The contract between src/db/pipelined.ts and the installed `pg`: the private members, message
 * shapes and behaviours that module relies on, exercised on the real Postgres. A `pg` upgrade
 * that changes one of them fails here with a message naming the `pg` version and what changed,
 * instead of surfacing as a wrong answer or a hung request in the read-only executor.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  connectionProblems,
  PG_VERSION,
  runPipelined,
  toWireValue,
  watchReceivedBytes,
  type PipelinedBatch,
} from '../../src/db/pipelined.js';
import { RAW_TYPES } from '../../src/query/encode.js';
import { ADMIN_URL } from '../support/db.js';

/** A test of one thing relied on; any failure is reported as a change in `pg`. */
function relied(what: string, fn: () => Promise<void>): void {
  it(`pg ${PG_VERSION}: ${what}`, async () => {
    try {
      await fn();
    } catch (err) {
      throw new Error(`pg ${PG_VERSION} changed what src/db/pipelined.ts relies on: ${what}\n    ${(err as Error).message}`);
    }
  });
}

const batch = (text: string, values: unknown[] = [], before: string[] = [], after: string[] = []): PipelinedBatch => ({
  before,
  query: { text, values: values.map(toWireValue) },
  after,
});

describe('the pg internals behind src/db/pipelined.ts', function () {
  this.timeout(20_000);
  let client: pg.Client;
  /** ReadyForQuery messages seen on `client` (one per round trip). */
  let readies = 0;

  beforeEach(async () => {
    client = new pg.Client({ connectionString: ADMIN_URL, application_name: 'logquery-pg-contract' });
    client.on('error', () => undefined); // a test destroys the socket on purpose
    await client.connect();
    readies = 0;
    (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('readyForQuery', () => readies++);
  });
  afterEach(async () => {
    await client.end().catch(() => undefined);
  });

  relied('a connected client exposes connection.{parse, bind, describe, execute, sync, sendCopyFail, stream}', async () => {
    assert.deepEqual(connectionProblems(client), []);
  });

  relied('pg/lib/utils prepareValue maps values to the same wire text as Client#query sends', async () => {
    const values: unknown[] = [
      'text',
      42,
      1.5,
      true,
      null,
      undefined,
      new Date('2026-01-02T03:04:05.678Z'),
      Buffer.from('bytes'),
      [1, 'two', null],
      { a: [1, { b: 'c' }] },
      10n,
    ];
    const sql = values.map((_, i) => `$${i + 1}::text`).join(', ');
    const viaPg = await client.query({ text: `SELECT ${sql}`, values, rowMode: 'array', types: RAW_TYPES });
    const viaBatch = await runPipelined(client, batch(`SELECT ${sql}`, values), 10_000);
    assert.deepEqual(viaBatch.rows, viaPg.rows);
    assert.equal(toWireValue(null), null);
    assert.ok(Buffer.isBuffer(toWireValue(Buffer.from('x'))), 'a Buffer is sent as bytes');
  });

  relied('row descriptions and data rows arrive as {fields: [{name, dataTypeID}]} and {fields: [text | null]}', async () => {
    const text = "SELECT 1::int4 AS a, 'x'::text AS b, NULL::jsonb AS c, '{\"k\":[1]}'::jsonb AS d FROM generate_series(1, 3)";
    const viaPg = await client.query({ text, rowMode: 'array', types: RAW_TYPES, queryMode: 'extended' } as pg.QueryArrayConfig);
    const run = await runPipelined(client, batch(text), 10_000);
    assert.deepEqual(
      run.fields.map((f) => [f.name, f.dataTypeID]),
      [
        ['a', 23],
        ['b', 25],
        ['c', 3802],
        ['d', 3802],
      ],
    );
    assert.deepEqual(
      run.fields.map((f) => [f.name, f.dataTypeID]),
      viaPg.fields.map((f) => [f.name, f.dataTypeID]),
    );
    assert.deepEqual(run.rows, viaPg.rows);
    assert.deepEqual(run.rows[0], ['1', 'x', null, '{"k": [1]}']);
  });

  relied('statements, the query and more statements behind one Sync are one round trip, each completing in order', async () => {
    const run = await runPipelined(
      client,
      batch(
        "SELECT current_setting('statement_timeout'), current_setting('transaction_read_only')",
        [],
        ['BEGIN READ ONLY', 'SET LOCAL statement_timeout = 1234'],
        ['ROLLBACK'],
      ),
      10_000,
    );
    assert.equal(readies, 1, 'ReadyForQuery messages for one batch');
    assert.deepEqual(run.rows, [['1234ms', 'on']]);
    assert.equal(client.getTransactionStatus(), 'I');
    assert.equal((await client.query("SELECT current_setting('statement_timeout') AS t")).rows[0].t, '0', 'the ROLLBACK undid the setting');
  });

  relied('after a failed statement nothing up to the Sync runs (the query never runs outside its transaction)', async () => {
    await client.query('CREATE TEMP TABLE contract_probe (n int)');
    readies = 0;
    await assert.rejects(
      runPipelined(client, batch('INSERT INTO contract_probe VALUES (1)', [], ['BEGIN', 'SELECT 1 / 0'], ['COMMIT']), 10_000),
      (e: { code?: string }) => e.code === '22012',
    );
    await client.query('ROLLBACK'); // sent once the batch's ReadyForQuery has arrived
    assert.equal(readies, 2, 'ReadyForQuery messages: the batch and the ROLLBACK');
    assert.equal(
      (await client.query('SELECT count(*)::int AS n FROM contract_probe')).rows[0].n,
      0,
      'the INSERT after the failed statement did not run',
    );
    // A failed query skips what follows it: the transaction stays open (aborted) for the caller.
    await assert.rejects(
      runPipelined(client, batch('SELECT 1 / 0', [], ['BEGIN'], ['ROLLBACK']), 10_000),
      (e: { code?: string }) => e.code === '22012',
    );
    await client.query('SELECT 1').catch(() => undefined); // queued behind the batch's ReadyForQuery
    assert.equal(client.getTransactionStatus(), 'E');
    await client.query('ROLLBACK');
  });

  relied('the query is parsed as exactly one statement (several are 42601)', async () => {
    await assert.rejects(runPipelined(client, batch('SELECT 1; SELECT 2'), 10_000), (e: { code?: string }) => e.code === '42601');
    assert.deepEqual((await runPipelined(client, batch('SELECT 3'), 10_000)).rows, [['3']]);
  });

  relied('an empty query completes (handleEmptyQuery) with no rows', async () => {
    assert.deepEqual(await runPipelined(client, batch('', [], ['BEGIN'], ['ROLLBACK']), 10_000), { fields: [], rows: [] });
    assert.equal(client.getTransactionStatus(), 'I');
  });

  relied('COPY FROM STDIN is answered with CopyFail (handleCopyInResponse) and never leaves the batch waiting', async () => {
    await client.query('CREATE TEMP TABLE contract_copy (n int)');
    await assert.rejects(runPipelined(client, batch('COPY contract_copy FROM STDIN'), 10_000), /COPY is not supported here/);
    assert.deepEqual((await runPipelined(client, batch('SELECT count(*) FROM contract_copy'), 10_000)).rows, [['0']]);
    // With statements after it (the executor's shape) the next Parse is a protocol violation: the
    // backend ends the connection, nothing after the COPY runs, and the caller drops the client.
    await assert.rejects(
      runPipelined(client, batch('COPY contract_copy FROM STDIN', [], ['BEGIN'], ['ROLLBACK']), 10_000),
      (e: { code?: string }) => e.code === '08P01',
    );
    await assert.rejects(client.query('SELECT 1'), /not queryable|terminat/);
  });

  relied("Client#query reads the submittable's query_timeout as its read limit", async () => {
    await assert.rejects(runPipelined(client, batch('SELECT pg_sleep(3)'), 300), /Query read timeout/);
  });

  relied('connection.stream carries the bytes received, and destroying it fails the query in flight', async () => {
    const small = watchReceivedBytes(client, 1_000_000);
    await runPipelined(client, batch("SELECT repeat('x', 1000)"), 10_000);
    small.stop();
    assert.equal(small.exceeded, false);
    const big = watchReceivedBytes(client, 100_000);
    await assert.rejects(runPipelined(client, batch("SELECT repeat('x', 1000) FROM generate_series(1, 10000)"), 10_000));
    big.stop();
    assert.equal(big.exceeded, true);
  });
});
