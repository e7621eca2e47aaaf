import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { coveringIndexes } from '../../src/storage/coveringIndexes.js';
import { HOURLY_MIN_ROWS, upkeepIndexes } from '../../src/storage/indexUpkeep.js';
import { rareTrigramsFunctionOf, rareTrigramsFunctionSql, trigramOpclass, trigramSchema } from '../../src/storage/searchIndexes.js';
import { containedTrigrams } from '../../src/sql/postgres/trigrams.js';
import { SEARCH_HOUR_MS, searchHoursAt, type SearchDay } from '../../src/sql/catalog.js';
import { dayTautology } from '../../src/sql/postgres/searchHours.js';
import { pg as pgAst } from '../../src/sql/postgres/ast.js';
import { printExpr } from '../../src/sql/postgres/print.js';
import { createLogTable, ensurePartitions } from '../../src/storage/logTables.js';
import { eventually, sleep } from '../support/wait.js';
import { migrateUp } from '../../src/db/migrate.js';
import { runTranslation, sampleSources } from '../support/translation.js';

// Self-contained: own temp data dir, port 0, no shared hooks needed.
describe('embedded Postgres (PGlite over pglite-socket)', function () {
  this.timeout(60_000);

  let dataDir: string;
  let embedded: EmbeddedPostgres | undefined;
  let pool: pg.Pool | undefined;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'logquery-embedded-'));
    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'data'), port: 0 });
    pool = new pg.Pool({ connectionString: embedded.url, max: 4 });
    pool.on('error', () => {});
    await pool.query('CREATE TABLE items (id int PRIMARY KEY, tag text NOT NULL)');
  });

  after(async () => {
    await pool?.end();
    await embedded?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const db = () => pool!;

  it('serves a loopback postgres:// url that pg connects to', async () => {
    assert.match(embedded!.url, /^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const { rows } = await db().query<{ v: string; one: number }>('SELECT version() AS v, 1::int AS one');
    assert.match(rows[0].v, /PGlite/);
    assert.equal(rows[0].one, 1);
  });

  it('answers many concurrent parameterised queries from a pool of 4 correctly', async () => {
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        i % 2 === 0
          ? db().query<{ x: number; y: string }>('SELECT $1::int AS x, $2::text AS y', [i, `s${i}`])
          : db().query<{ x: number; y: string }>(`SELECT ${i} AS x, 's${i}' AS y`),
      ),
    );
    results.forEach((r, i) => assert.deepEqual(r.rows, [{ x: i, y: `s${i}` }]));
    assert.equal(db().totalCount, 4);
  });

  it('isolates interleaved transactions from different pool clients', async () => {
    const pause = () => sleep(30);
    async function tx(tag: string, base: number, commit: boolean) {
      const client = await db().connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO items VALUES ($1, $2)', [base, tag]);
        await pause();
        await client.query('INSERT INTO items VALUES ($1, $2)', [base + 1, tag]);
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM items WHERE tag = $1', [tag]);
        assert.equal(rows[0].n, 2, 'a transaction sees its own rows');
        await client.query(commit ? 'COMMIT' : 'ROLLBACK');
      } finally {
        client.release();
      }
    }
    const [, , , during] = await Promise.all([
      tx('a', 100, true),
      tx('b', 200, true),
      tx('c', 300, false),
      db().query<{ n: number }>("SELECT count(*)::int AS n FROM items WHERE tag = 'c'"),
    ]);
    assert.equal(during.rows[0].n, 0, 'uncommitted rows are not visible to other clients');
    const { rows } = await db().query<{ id: number; tag: string }>('SELECT id, tag FROM items WHERE id >= 100 ORDER BY id');
    assert.deepEqual(rows, [
      { id: 100, tag: 'a' },
      { id: 101, tag: 'a' },
      { id: 200, tag: 'b' },
      { id: 201, tag: 'b' },
    ]);
  });

  it('keeps a failed transaction to its own client until it rolls back', async () => {
    const a = await db().connect();
    try {
      await a.query('BEGIN');
      await assert.rejects(a.query('INSERT INTO items VALUES (100, $1)', ['dup']), /duplicate key/);
      const other = db().query<{ n: number }>('SELECT count(*)::int AS n FROM items');
      await assert.rejects(a.query('SELECT 1'), /current transaction is aborted/);
      await a.query('ROLLBACK');
      assert.equal((await other).rows[0].n, 4);
    } finally {
      a.release();
    }
  });

  it('lets two clients prepare statements with the same name', async () => {
    const [c1, c2] = [await db().connect(), await db().connect()];
    try {
      const run = (c: pg.PoolClient, v: number) =>
        c.query<{ v: number }>({ name: 'same_name', text: 'SELECT $1::int + 0 AS v', values: [v] });
      const results = await Promise.all([run(c1, 1), run(c2, 2), run(c1, 3), run(c2, 4)]);
      assert.deepEqual(
        results.map((r) => r.rows[0].v),
        [1, 2, 3, 4],
      );
    } finally {
      c1.release(true); // close both connections: their statements must be deallocated
      c2.release(true);
    }
    const count = async () =>
      (await db().query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE '%same_name'")).rows[0].n;
    await eventually(async () => (await count()) === 0, 1_000, 20);
    assert.equal(await count(), 0);
  });

  it('does not interleave another connection into a half-sent extended-protocol query', async () => {
    // pglite-socket's own queue switches connections between Parse and Execute; this one must not.
    const raw = await RawConnection.open(embedded!.url);
    try {
      raw.send(parse('SELECT $1::int + 1000 AS a'), bind(['1']));
      await sleep(50);
      const other = db().query<{ b: string }>('SELECT $1::text AS b', ['other']); // waits for the raw batch
      await sleep(50);
      raw.send(describePortal(), execute(), sync());
      const reply = await raw.untilReady();
      assert.ok(!reply.includes('portal'), reply);
      assert.ok(reply.includes('1001'), reply);
      assert.deepEqual((await other).rows, [{ b: 'other' }]);
    } finally {
      raw.destroy();
    }
  });

  it('rolls back and unblocks others when a client disconnects inside a transaction', async () => {
    const client = new pg.Client(embedded!.url);
    client.on('error', () => {});
    await client.connect();
    await client.query('BEGIN');
    await client.query("INSERT INTO items VALUES (900, 'lost')");
    const blocked = db().query<{ n: number }>('SELECT count(*)::int AS n FROM items WHERE id = 900');
    await sleep(30);
    (client as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
    assert.equal((await blocked).rows[0].n, 0);
    await client.end().catch(() => {});
  });

  it('sends nothing to other clients when cleaning up after a closed connection', async () => {
    const leaving = new pg.Client(embedded!.url);
    leaving.on('error', () => {});
    await leaving.connect();
    await leaving.query({ name: 'to_close', text: 'SELECT 1 AS one' });
    const bystander = await RawConnection.open(embedded!.url);
    try {
      bystander.send(parse('SELECT 1'), bind([]), execute(), sync());
      await bystander.untilReady(); // now the last connection PGlite streamed output to
      // Drop the connection without Terminate: its prepared statement is then closed on the backend.
      (leaving as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
      await sleep(100);
      assert.equal(bystander.unread(), 0, 'bytes arrived unasked');
      assert.deepEqual((await db().query('SELECT 2 AS two')).rows, [{ two: 2 }]);
    } finally {
      bystander.destroy();
    }
  });

  it('allows back-to-back connections (migration runs open and close their own)', async () => {
    for (let i = 0; i < 5; i++) {
      const c = new pg.Client(embedded!.url);
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
    }
  });

  it('persists data across stop and start', async () => {
    await db().query("INSERT INTO items VALUES (1, 'kept')");
    await pool!.end();
    await embedded!.stop();
    await embedded!.stop(); // idempotent

    embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'data') });
    pool = new pg.Pool({ connectionString: embedded.url, max: 4 });
    pool.on('error', () => {});
    const { rows } = await db().query('SELECT id, tag FROM items ORDER BY id');
    assert.deepEqual(rows, [
      { id: 1, tag: 'kept' },
      { id: 100, tag: 'a' },
      { id: 101, tag: 'a' },
      { id: 200, tag: 'b' },
      { id: 201, tag: 'b' },
    ]);
  });

  it('refuses a second process on the same data directory, naming the owner', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve('src/db/embedded.ts'))};
      startEmbeddedPostgres({ dataDir: ${JSON.stringify(path.join(dataDir, 'data'))} }).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(3); });`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(child.status, 3, child.stderr);
    assert.match(child.stderr, new RegExp(`in use by process ${process.pid}`));
  });

  // What the embedded default supports, for deciding what the service may rely on there.
  it('supports roles, SET LOCAL ROLE, GRANT, range partitioning, jsonb and regexp; not lz4', async () => {
    const q = (sql: string) => db().query(sql);
    await q('CREATE ROLE probe_ro NOLOGIN');
    await q('CREATE TABLE ev (ts timestamptz NOT NULL, doc jsonb, msg text) PARTITION BY RANGE (ts)');
    await q("CREATE TABLE ev_p1 PARTITION OF ev FOR VALUES FROM ('2026-01-01') TO ('2026-02-01')");
    await q(`INSERT INTO ev VALUES ('2026-01-05', '[{"a":1},{"a":2}]', 'error: disk full')`);
    await q('GRANT USAGE ON SCHEMA public TO probe_ro');
    await q('GRANT SELECT ON ev TO probe_ro');

    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL ROLE probe_ro');
      const { rows } = await client.query(
        "SELECT current_user AS u, e->>'a' AS a, msg ~ '^error: .*full$' AS m FROM ev, jsonb_array_elements(doc) e ORDER BY a",
      );
      assert.deepEqual(rows, [
        { u: 'probe_ro', a: '1', m: true },
        { u: 'probe_ro', a: '2', m: true },
      ]);
      await assert.rejects(client.query("INSERT INTO ev VALUES ('2026-01-06', '[]', 'x')"), /permission denied/);
      await client.query('ROLLBACK');
      assert.equal((await client.query('SELECT current_user AS u')).rows[0].u, 'postgres');
    } finally {
      client.release();
    }

    await assert.rejects(q('CREATE TABLE z (t text COMPRESSION lz4)'), /lz4 not supported/);
  });

  it('ships pg_trgm: the index upkeep builds a search index on a log table and a LIKE search uses it', async () => {
    await db().query('CREATE EXTENSION IF NOT EXISTS pg_trgm'); // what migrations/1764300000000_search-index.js does
    await db().query('CREATE SCHEMA IF NOT EXISTS logs');
    await db().query('DO $$ BEGIN CREATE ROLE logquery_reader NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$');
    const now = Date.now();
    await createLogTable(db(), 'embedded_search', [], coveringIndexes('embedded_search', []), { lz4: false });
    await ensurePartitions(db(), 'embedded_search', now - 86_400_000, now);
    await db().query(
      `INSERT INTO logs.embedded_search (id, "timestamp", event_message)
       SELECT 'e' || i, now() - (i || ' minutes')::interval, 'GET /rest/v1/todos ' || md5(i::text) FROM generate_series(1, 500) i`,
    );
    // Search indexes are built on days that are over (src/storage/searchIndexes.ts): as of two days on, both partitions are.
    const done = await upkeepIndexes(db(), 'embedded_search', [], ['event_message'], now + 2 * 86_400_000);
    assert.ok(
      done.some((d) => d.startsWith('built')),
      done.join('\n'),
    );
    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      const needle = `%${createHash('md5').update('42').digest('hex').slice(0, 12)}%`;
      const plan = await client.query(`EXPLAIN SELECT id FROM logs.embedded_search WHERE event_message LIKE $1`, [needle]);
      assert.match(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'), /Bitmap Index Scan/);
      const { rows } = await client.query(`SELECT id FROM logs.embedded_search WHERE event_message LIKE $1`, [needle]);
      assert.deepEqual(rows, [{ id: 'e42' }]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it("runs the rare-trigram search index: its function (the text's trigrams less a frozen set) indexed, and the translator's test reads it", async () => {
    // After the test above (pg_trgm, the logs schema and embedded_search with its rows are there).
    const opclass = (await trigramOpclass(db()))!;
    const common = ['get', 'res', 'est', 'tod', 'odo', 'dos', ' re', '  r', '  g', ' ge', 'et ', 'st ', 'os '];
    const fn = rareTrigramsFunctionOf(common);
    await db().query(rareTrigramsFunctionSql(fn, trigramSchema(opclass), common));
    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await client.query(`CREATE INDEX embedded_rare ON logs.embedded_search USING gin (${fn}(event_message))`);
      await client.query('SET LOCAL enable_seqscan = off');
      const token = createHash('md5').update('42').digest('hex').slice(0, 12);
      // What search.ts prints for `regexp_contains(event_message, 'todos <token>')`: the LIKE and the token's trigrams.
      const asked = [...containedTrigrams(`todos ${token}`)].filter((t) => !common.includes(t)).sort();
      const test = `event_message LIKE '%todos ${token}%' AND ${fn}(event_message) @> ARRAY[${asked.map((t) => `'${t}'`).join(', ')}]`;
      const plan = await client.query(`EXPLAIN SELECT id FROM logs.embedded_search WHERE ${test}`);
      assert.match(
        plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'),
        /Bitmap Index Scan on embedded_search_p\d+_\w+ .*\n\s*Index Cond: \(.*@> '\{/,
      );
      const { rows } = await client.query(`SELECT id FROM logs.embedded_search WHERE ${test}`);
      assert.deepEqual(rows, [{ id: 'e42' }]);
      const { rows: kept } = await client.query<{ t: string[] }>(`SELECT ${fn}('GET /rest/v1/todos abc') AS t`);
      assert.deepEqual([...kept[0].t].sort(), [' v1', '  a', '  t', ' to', '  v', ' ab', 'abc', 'bc ', 'v1 '].sort());
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('ships pg_trgm: a busy open day gets a partial search index per hour over, and a LIKE split by those hours reads them', async () => {
    // After the test above (pg_trgm, the logs schema and the reader role are there).
    const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
    const nowMs = day + 2 * SEARCH_HOUR_MS + 5 * 60_000; // hours 0 and 1 over
    await createLogTable(db(), 'embedded_hourly', [], coveringIndexes('embedded_hourly', []), { lz4: false });
    await ensurePartitions(db(), 'embedded_hourly', day, day);
    await db().query(
      `INSERT INTO logs.embedded_hourly (id, "timestamp", event_message)
       SELECT 'e' || i, to_timestamp(($1::bigint + i * 300) / 1000.0), 'GET /rest/v1/todos ' || md5(i::text)
         FROM generate_series(1, $2::int) i`,
      [day, HOURLY_MIN_ROWS + 500],
    );
    await db().query('ANALYZE logs.embedded_hourly');
    const done = await upkeepIndexes(db(), 'embedded_hourly', [], ['event_message'], nowMs);
    assert.deepEqual(
      done.filter((d) => d.startsWith('built')).map((d) => d.replace(/^.* for /, '')),
      [0, 1].map((h) => new Date(day + h * SEARCH_HOUR_MS).toISOString().slice(0, 13) + 'h'),
    );
    const split = searchHoursAt(nowMs).days.map((d) => printSplit(d));
    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_indexscan = off');
      const needle = `%${createHash('md5').update('4242').digest('hex').slice(0, 12)}%`; // e4242: at 21 min past hour 0
      const where = `event_message LIKE $1 AND ${split.join(' AND ')}`;
      const plan = await client.query(`EXPLAIN SELECT id FROM logs.embedded_hourly WHERE ${where}`, [needle]);
      assert.match(
        plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n'),
        /BitmapOr[^]*Bitmap Index Scan on embedded_hourly_p\d+_search_/,
      );
      const { rows } = await client.query(`SELECT id FROM logs.embedded_hourly WHERE ${where}`, [needle]);
      assert.deepEqual(rows, [{ id: 'e4242' }]);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('runs the migrations, and the function library’s plpgsql (FARM_FINGERPRINT, SHA1, NET, public suffixes) answers as on Postgres', async () => {
    await migrateUp(embedded!.url);
    const { rows } = await runTranslation(
      `SELECT CAST(FARM_FINGERPRINT('1footrue') AS STRING) AS a, CAST(FARM_FINGERPRINT(REPEAT('ab', 64)) AS STRING) AS b,
         TO_HEX(SHA1('Hello World')) AS c, NET.IP_TO_STRING(NET.IP_TRUNC(NET.IP_FROM_STRING('::ffff:192.0.2.128'), 120)) AS d,
         NET.REG_DOMAIN('http://例子.卷筒纸.中国') AS e, NET.PUBLIC_SUFFIX('http://foo.bar.kh') AS f, TO_BASE32(FROM_HEX('6162636465ff')) AS g,
         ARRAY_CONCAT_AGG(x) AS h, MAX_BY(y, z) AS i
       FROM UNNEST([STRUCT([1, 2] AS x, 'p' AS y, 1 AS z), ([3], 'q', 2)])`,
      { pool: db(), sources: sampleSources() },
    );
    assert.deepEqual(rows, [
      {
        a: '-1541654101129638711',
        b: '-603918529221291818',
        c: '0a4d55a8d778e5022fab701977c5d840bbc486d0',
        d: '::ffff:192.0.2.0',
        e: '卷筒纸.中国',
        f: 'bar.kh',
        g: 'MFRGGZDF74======',
        h: [1, 2, 3], // a STRUCT's array field is jsonb: ARRAY_CONCAT_AGG of jsonb arrays
        i: 'q',
      },
    ]);
  });

  it('accepts SET LOCAL statement_timeout but never enforces it', async () => {
    const client = await db().connect();
    try {
      await client.query('BEGIN');
      await client.query("SET LOCAL statement_timeout = '50ms'");
      await client.query('SELECT pg_sleep(0.3)'); // would fail with 57014 on real Postgres
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});

// --- a minimal wire-protocol client, to send a query batch in two halves -------------------------

class RawConnection {
  private received = Buffer.alloc(0);
  private waiter: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (d: Buffer) => {
      this.received = Buffer.concat([this.received, d]);
      this.waiter?.();
    });
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const conn = new RawConnection(socket);
    const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + params.length, 0);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, params]));
    await conn.untilReady();
    return conn;
  }

  unread(): number {
    return this.received.length;
  }

  send(...messages: Buffer[]): void {
    this.socket.write(Buffer.concat(messages));
  }

  /** Everything received up to ReadyForQuery, as latin1 text. */
  async untilReady(): Promise<string> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const i = this.received.indexOf(Buffer.from([0x5a, 0, 0, 0, 5]));
      if (i >= 0 && this.received.length >= i + 6) {
        const text = this.received.subarray(0, i + 6).toString('latin1');
        this.received = this.received.subarray(i + 6);
        return text;
      }
      if (Date.now() > deadline) throw new Error('no ReadyForQuery');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string) => Buffer.from(`${s}\0`);
const int16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
const parse = (text: string) => message('P', Buffer.concat([cstr(''), cstr(text), int16(0)]));
const bind = (values: string[]) =>
  message(
    'B',
    Buffer.concat([
      cstr(''),
      cstr(''),
      int16(0),
      int16(values.length),
      ...values.flatMap((v) => [int32(Buffer.byteLength(v)), Buffer.from(v)]),
      int16(0),
    ]),
  );
const describePortal = () => message('D', Buffer.concat([Buffer.from('P'), cstr('')]));
const execute = () => message('E', Buffer.concat([cstr(''), int32(0)]));
const sync = () => message('S', Buffer.alloc(0));

/** The translator's split of one day (src/sql/postgres/searchHours.ts) as SQL on the column `"timestamp"`. */
function printSplit(day: SearchDay): string {
  return printExpr(dayTautology(pgAst.column(undefined, 'timestamp'), day));
}
