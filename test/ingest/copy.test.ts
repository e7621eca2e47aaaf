/**
 * The writer's COPY path (src/ingest/write.ts): every value survives COPY text format exactly
 * (tabs, newlines, carriage returns, backslashes, `\N`, `\.`, quotes, unicode), the same as
 * the INSERT path stores it; a failed COPY leaves nothing and a healthy connection; the embedded
 * PGlite database, which cannot take COPY FROM STDIN over its socket, keeps the INSERT.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Listener } from '../../src/http/server.js';
import request from 'supertest';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { loadConfig } from '../../src/config.js';
import { createContext, type AppContext } from '../../src/context.js';
import { withTransaction } from '../../src/db/transaction.js';
import { normaliseEvents, type LogRow } from '../../src/ingest/normalise.js';
import { toStoredShape } from '../../src/sources/shape.js';
import { microsToIso } from '../../src/ingest/timestamp.js';
import { copyChunks, copyJson, copyRows, copyText, insertRows, rowWriterFor, type RowWriter } from '../../src/ingest/write.js';
import { FactsObserver } from '../../src/storage/hotLeafFacts.js';
import { createLogger } from '../../src/logger.js';
import { testApp, type TestApp } from '../support/http.js';
import { eventually } from '../support/wait.js';

const SOURCE = 'cloudflare.logs.prod';
const TABLE = 'logs.cloudflare_logs_prod';

/** Strings that COPY text format would misread if any escape were missing or doubled. */
const TRICKY = [
  'tab\there',
  'new\nline',
  'carriage\rreturn and\r\nCRLF',
  'back\\slash',
  'ends with a backslash\\',
  '\\',
  '\\N',
  '\\\\N',
  '\\.',
  'line\n\\.\nafter an end-of-data marker',
  '\\t \\n \\r \\\\ written as escapes, not characters',
  '\\u0041 and \\x41 and \\101 are not escapes here',
  'double " and single \' quotes, `backticks`',
  'unicode: é ß 中文 עברית 😀 \u00a0 \u2028 \u2029 \ufeff',
  'controls \u0001 \u0008 \u000b \u000c \u001f \u007f',
  'all at once: \t\\\n\r\\N"\'😀',
  '',
  ' ',
  '{"json": "in a string \\" with escapes \\\\"}',
];

/** One event per tricky string, in every column it can reach (keys are renamed by fieldName, so they are checked too). */
function trickyEvents(project: string, prefix: string): Record<string, unknown>[] {
  return TRICKY.map((s, i) => ({
    id: `${prefix}-${i}-${s}`.slice(0, 200),
    project,
    event_message: s,
    metadata: { text: s, nested: { deeper: s, list: [s, i, null, { inList: s }], n: 1.5, yes: true }, [`key ${s}`]: s },
    extra: s,
  }));
}

/** The stored row of each event, as the writer must store it. */
function expectedRows(events: Record<string, unknown>[]) {
  return events.map((e) => ({
    id: e.id,
    event_message: e.event_message,
    project: e.project,
    metadata: toStoredShape(e.metadata),
    body: { extra: toStoredShape(e.extra) },
  }));
}

const byId = (a: { id: unknown }, b: { id: unknown }) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0);

/** Rows of a project, in JavaScript's order of ids (the database's collation may order them otherwise). */
async function readRows(ctx: AppContext, project: string) {
  const { rows } = await ctx.db.pool.query(`SELECT id, event_message, project, metadata, body FROM ${TABLE} WHERE project = $1`, [project]);
  return rows.sort(byId);
}

describe('ingest writer: COPY text format', () => {
  it('escapes backslash, tab, newline and carriage return, and nothing else', () => {
    assert.equal(copyText('plain text, "quotes" and ünïcode 😀'), 'plain text, "quotes" and ünïcode 😀');
    assert.equal(copyText('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e');
    assert.equal(copyText('\\N'), '\\\\N');
    assert.equal(copyText('\\.'), '\\\\.');
    assert.equal(copyJson(null), '\\N');
    assert.equal(copyJson(undefined), '\\N');
    // JSON.stringify gives [{"a":"x\ty\n\"z\"\\"}]; COPY needs each of its backslashes doubled.
    assert.equal(copyJson([{ a: 'x\ty\n"z"\\' }]), String.raw`[{"a":"x\\ty\\n\\"z\\"\\\\"}]`);
    for (const s of TRICKY) {
      for (const out of [copyText(s), copyJson({ s })])
        assert.doesNotMatch(out, /[\t\n\r]/, `raw separator left in ${JSON.stringify(out)}`);
    }
  });
});

describe('ingest writer: COPY chunks', () => {
  it('when rows are split into ~1 MB chunks (a row larger than a chunk gets its own), then the bytes are those of the whole text', () => {
    const row = (i: number, message: string): LogRow => ({
      id: `r${i}`,
      micros: 1_700_000_000_000_000n + BigInt(i),
      event_message: message,
      project: null,
      metadata: [{ m: message.slice(0, 100) }],
      body: null,
    });
    const rows = [
      ...Array.from({ length: 3000 }, (_, i) => row(i, `small ${i} € 😀 \t`.repeat(30))),
      row(3000, '€😀\\'.repeat(400_000)), // ~3.6 MB of UTF-8: more than one chunk by itself
      row(3001, 'after the large row'),
    ];
    const chunks = copyChunks(rows);
    assert.ok(chunks.length > 3, `expected several chunks, got ${chunks.length}`);
    const text = rows
      .map((r) => [copyText(r.id), microsToIso(r.micros), copyText(r.event_message!), '\\N', copyJson(r.metadata), '\\N'].join('\t') + '\n')
      .join('');
    assert.ok(Buffer.concat(chunks).equals(Buffer.from(text, 'utf8')));
  });
});

describe('ingest writer: COPY on Postgres', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const post = (body: unknown) =>
    request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .send(body as object);

  it('uses COPY on Postgres', async () => {
    assert.equal(t.context.db.capabilities.pglite, false);
    assert.equal(rowWriterFor(t.context.db.capabilities), copyRows);
  });

  it('when events hold tabs, newlines, backslashes, \\N, quotes and unicode, then POST /api/logs stores every value exactly', async () => {
    const project = 'copy-roundtrip';
    const events = trickyEvents(project, 'rt');
    events.push({ id: 'rt-project', project: `${project}\t\\N\n`, event_message: null, metadata: null });
    const res = await post({ batch: events }).expect(200);
    assert.equal(res.body.count, events.length);
    assert.equal((t.context.writer as unknown as { writeRows: RowWriter }).writeRows, copyRows);

    const rows = await readRows(t.context, project);
    assert.deepEqual(rows, expectedRows(events.slice(0, -1)).sort(byId));
    const odd = await t.context.db.pool.query(`SELECT project, event_message, metadata, body FROM ${TABLE} WHERE id = 'rt-project'`);
    assert.deepEqual(odd.rows, [{ project: `${project}\t\\N\n`, event_message: null, metadata: null, body: null }]);
  });

  it('when the same rows are written by COPY and by the INSERT, then both store the same text and jsonb', async () => {
    const now = Date.now();
    const rowsOf = (prefix: string) => {
      const batch = normaliseEvents(
        trickyEvents('copy-vs-insert', prefix).map((e, i) => ({ ...e, timestamp: (now - i) * 1000 })),
        { nowMs: now, retentionDays: 30 },
      );
      assert.deepEqual(batch.errors, []);
      return batch.rows;
    };
    const source = await t.context.sources.get(SOURCE);
    const copied = rowsOf('c'),
      inserted = rowsOf('i');
    await t.context.writer.write(source, copied.slice(0, 1), {}); // partitions for this day
    await withTransaction(t.context.db.pool, async (client) => {
      const hot = source.hot_leaves ?? [];
      await copyRows(client, source.table_name, copied.slice(1), new FactsObserver(hot, source.table_name));
      await insertRows(client, source.table_name, inserted, new FactsObserver(hot, source.table_name));
    });
    const { rows } = await t.context.db.pool.query(
      `SELECT substr(id, 1, 1) AS via, substr(id, 2) AS rest, "timestamp", event_message, project, metadata::text, body::text,
              "metadata.request.path", "metadata.response.status_code"
         FROM ${TABLE} WHERE project = 'copy-vs-insert' ORDER BY rest, via`,
    );
    assert.equal(rows.length, 2 * TRICKY.length);
    for (let i = 0; i < rows.length; i += 2) {
      const [c, ins] = [rows[i], rows[i + 1]];
      assert.equal(c.via, 'c');
      assert.equal(ins.via, 'i');
      assert.deepEqual({ ...c, via: undefined }, { ...ins, via: undefined });
    }
  });

  it('when a COPY fails mid-batch, then nothing of the batch is written and the pool stays healthy', async () => {
    const source = await t.context.sources.get(SOURCE);
    const now = Date.now();
    const row = (id: string, metadata: unknown): LogRow => ({
      id,
      micros: BigInt(now) * 1000n,
      event_message: 'x',
      project: 'copy-fail',
      metadata,
      body: null,
    });
    // A lone surrogate is rejected by normalisation; written directly, jsonb refuses its \ud800 escape.
    const rows = [row('fail-0', [{ a: 1 }]), row('fail-1', [{ a: 'x\ud800y' }]), row('fail-2', [{ a: 2 }])];
    await assert.rejects(t.context.writer.write(source, rows, {}), /invalid input syntax for type json|Unicode/i);
    assert.equal((await readRows(t.context, 'copy-fail')).length, 0);
    await t.context.writer.write(source, [row('fail-ok', [{ a: 3 }])], {});
    assert.deepEqual(
      (await readRows(t.context, 'copy-fail')).map((r) => r.id),
      ['fail-ok'],
    );
    // The shared context's background work (index upkeep started by an earlier test) may hold a
    // client for a while; a client the failed COPY leaked would never come back.
    const pool = t.context.db.pool;
    assert.ok(await eventually(() => pool.totalCount - pool.idleCount === 0, 15_000), 'no client left checked out');
  });

  it('when the COPY statement itself fails (no such table), then the transaction rolls back and the connection stays usable', async () => {
    const now = Date.now();
    const rows: LogRow[] = [
      { id: 'missing-0', micros: BigInt(now) * 1000n, event_message: 'x', project: 'copy-missing', metadata: null, body: null },
    ];
    const client = await t.context.db.pool.connect();
    try {
      await assert.rejects(
        (async () => {
          await client.query('BEGIN');
          await copyRows(client, 'no_such_table', rows);
        })(),
        /does not exist/,
      );
      await client.query('ROLLBACK');
      assert.deepEqual((await client.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    } finally {
      client.release();
    }
  });

  it('when a batch is large (5,000 events, ~4 MB), then every row arrives once', async () => {
    const events = Array.from({ length: 5000 }, (_, i) => ({
      id: `big-${i}`,
      project: 'copy-big',
      event_message: `line ${i}\twith\\tab\n`.repeat(20),
      metadata: { i, s: 'x\\y\n'.repeat(10) },
    }));
    await post(events).expect(200);
    const { rows } = await t.context.db.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids, bool_and(event_message = repeat('line ' || substr(id, 5) || E'\\twith\\\\tab\\n', 20)) AS exact,
              bool_and(metadata->0->>'s' = repeat(E'x\\\\y\\n', 10)) AS json_exact
         FROM ${TABLE} WHERE project = 'copy-big'`,
    );
    assert.deepEqual(rows[0], { n: 5000, ids: 5000, exact: true, json_exact: true });
  });

  it('when one event is larger than a COPY chunk (multi-byte characters), then it is stored exactly', async () => {
    const message = '€😀\\\t'.repeat(250_000); // ~2.75 MB of UTF-8
    await post({ id: 'huge-1', project: 'copy-huge', event_message: message, metadata: { tail: message.slice(-1000) } }).expect(200);
    const rows = await readRows(t.context, 'copy-huge');
    assert.equal(rows.length, 1);
    assert.ok(rows[0].event_message === message, 'event_message differs');
    assert.deepEqual(rows[0].metadata, [{ tail: message.slice(-1000) }]);
  });

  it('when an event holds NUL in any column (id, project, message, metadata, body; JSON or NDJSON), then 406 names it before anything reaches COPY, and the clean events are stored', async () => {
    const res = await post({
      batch: [
        { id: 'nul\u0000id', project: 'copy-nul' },
        { id: 'nul-project', project: 'copy\u0000nul' },
        { id: 'nul-message', project: 'copy-nul', event_message: 'a\u0000b' },
        { id: 'nul-metadata', project: 'copy-nul', metadata: { list: ['ok', 'a\u0000b'] } },
        { id: 'nul-body', project: 'copy-nul', extra: { deep: 'a\u0000b' } },
        { id: 'nul-fine', project: 'copy-nul', event_message: '\\u0000 as text is fine' },
      ],
    }).expect(406);
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string }) => e.location),
      ['0', '1', '2', '3', '4'],
    );
    const ndjson = ['{"id": "nd-0", "project": "copy-nul"}', '{"id": "nd-1", "project": "copy-nul", "x": "a\\u0000b"}'].join('\n');
    const nd = await request(t.app)
      .post(`/api/logs?source_name=${SOURCE}`)
      .set('X-API-KEY', t.keys.ingest)
      .set('Content-Type', 'application/x-ndjson')
      .send(ndjson)
      .expect(406);
    assert.deepEqual(
      nd.body.error.errors.map((e: { location: string }) => e.location),
      ['1'],
    );
    assert.deepEqual((await readRows(t.context, 'copy-nul')).map((r) => r.id).sort(), ['nd-0', 'nul-fine']);
  });
});

describe('ingest writer: the embedded database (PGlite) keeps the INSERT', function () {
  this.timeout(120_000);
  let dir: string;
  let ctx: AppContext | undefined;
  let app: Listener;
  let key: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'logquery-ingest-embedded-'));
    ctx = await createContext(
      loadConfig({ DATA_DIR: path.join(dir, 'data'), LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' }),
      createLogger('silent'),
    );
    assert.equal(ctx.embedded, true);
    app = await createApp(ctx);
    key = generateKey();
    await ctx.keys.create('ingest', key, ['ingest']);
  });

  after(async () => {
    await ctx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('when the same tricky events are posted, then they are stored exactly, by the INSERT', async () => {
    assert.equal(ctx!.db.capabilities.pglite, true, 'the embedded database is recognised as PGlite');
    assert.equal(rowWriterFor(ctx!.db.capabilities), insertRows);
    const events = trickyEvents('embedded-roundtrip', 'em');
    const post = () => request(app).post(`/api/logs?source_name=${SOURCE}`).set('X-API-KEY', key).send({ batch: events });
    assert.equal((await post().expect(200)).body.count, events.length);
    assert.equal((ctx!.writer as unknown as { writeRows: RowWriter }).writeRows, insertRows);
    assert.deepEqual(await readRows(ctx!, 'embedded-roundtrip'), expectedRows(events).sort(byId));
    // The backend is still there and takes the next batch (a COPY would have ended it).
    await post().expect(200);
    assert.equal((await readRows(ctx!, 'embedded-roundtrip')).length, 2 * events.length);
  });
});
