/**
 * Writes one batch of normalised rows: partitions first (idempotent DDL, outside the
 * transaction so it does not hold a lock on the parent table while rows are written), then
 * rows and the merged schema in one transaction. The caller answers 200 only after this
 * resolves, i.e. after COMMIT: an acknowledged batch is durable, a failed one left nothing.
 *
 * Rows go in by `COPY … FROM STDIN` (text format) on Postgres, by one `INSERT … SELECT FROM
 * jsonb_to_recordset` on the embedded PGlite (see `rowWriterFor`).
 */
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTransaction } from '../db/transaction.js';
import { READ_ONLY_STATE } from '../db/primary.js';
import { UnavailableError } from '../errors.js';
import type { SourceRecord } from '../sources/repository.js';
import type { SourceService } from '../sources/service.js';
import type { FieldMap } from '../sources/schema.js';
import { dayStart, ensurePartitions, logTableName, qualifiedTable, quoteIdent } from '../storage/logTables.js';
import { hotColumnName, PG_HOT_TYPES, UNKNOWN_LEAF_CODE, type HotLeaf } from '../storage/hotLeaves.js';
import { FactsObserver, recordObservedFacts } from '../storage/hotLeafFacts.js';
import type { Logger } from '../logger.js';
import type { DatabaseCapabilities } from '../db/capabilities.js';
import type { LogRow } from './normalise.js';
import type { HourlyStore } from '../query/hourlyStore.js';
import { microsToIso } from './timestamp.js';

export class LogWriter {
  /** `table:dayMs` of partitions known to exist, so the hot path skips DDL. */
  private readonly knownPartitions = new Set<string>();
  /** How this database takes rows (rowWriterFor). */
  private readonly writeRows: RowWriter;

  /** A background reload of the catalog is scheduled (see reloadCatalog). */
  private reloadRetry: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sources: SourceService,
    private readonly logger: Logger | undefined,
    capabilities: Pick<DatabaseCapabilities, 'copyFromStdin'>,
    /** Where closed hours that got rows are reported (the hourly split's exact invalidation, src/query/hourlyStore.ts). */
    private readonly hourly?: Pick<HourlyStore, 'bumpHours'>,
  ) {
    this.writeRows = rowWriterFor(capabilities);
  }

  /**
   * `alsoInTransaction` runs in the rows' transaction, after them: what must commit with them or
   * not at all (the importer's progress, src/import/logflare/events.ts). Not run without rows.
   */
  async write(source: SourceRecord, rows: LogRow[], fields: FieldMap, alsoInTransaction?: InTransaction): Promise<void> {
    await this.writeBatch(source, rows, fields, alsoInTransaction).catch((err: unknown) => {
      // A node that stopped taking writes (demoted by the HA engine) refuses them as read-only:
      // nothing was stored, the shipper must send the batch again (503, Retry-After), and the
      // primary is looked for again (src/db/primary.ts).
      if ((err as { code?: string }).code === READ_ONLY_STATE)
        throw new UnavailableError('The database does not take writes right now (a failover is under way); send the batch again shortly.');
      throw err;
    });
    // After COMMIT and before the answer: a closed hour that got rows gets a new write version, so
    // no cached partial of it is read again, and the caller's next query sees its rows. Never throws.
    if (this.hourly && rows.length) await this.hourly.bumpHours(logTableName(source.table_name), hoursOf(rows));
  }

  private async writeBatch(source: SourceRecord, rows: LogRow[], fields: FieldMap, also?: InTransaction, retried = 0): Promise<void> {
    if (rows.length === 0) return;
    await this.ensurePartitionsFor(source.table_name, rows);
    // Most batches bring no new field: mergeSchema then returns at once, without locking the
    // source row (which would serialise concurrent batches) or reloading the catalog.
    const changed = await withTransaction(this.pool, async (client) => {
      const writeRows = this.writeRows;
      const hot = hotLeavesOf(source);
      const observer = hot.length ? new FactsObserver(hot, source.table_name) : undefined;
      await writeRows(client, source.table_name, rows, observer);
      // The facts of what these rows hold commit with them (src/storage/hotLeafFacts.ts).
      if (observer) await recordObservedFacts(client, source.table_name, observer.observed());
      await also?.(client);
      return this.sources.mergeSchema(client, source.id, fields);
    }).catch(async (err) => {
      // The hot leaves changed since this process last read the catalog: 42703 undefined_column,
      // a leaf was removed (its column dropped); UNKNOWN_LEAF_CODE, a leaf was added and this
      // batch left its column out. The batch wrote nothing; write it again with the current
      // leaves. A declaration adds the column a moment before it saves the leaf, so the catalog
      // may need a second look.
      const code = (err as { code?: string }).code;
      if ((code !== '42703' && code !== UNKNOWN_LEAF_CODE) || retried >= CATALOG_RETRIES) throw err;
      if (retried) await sleep(50 * retried);
      await this.sources.reload();
      await this.writeBatch(await this.sources.get(source.id), rows, fields, also, retried + 1);
      return false;
    });
    if (changed) await this.reloadCatalog();
  }

  /**
   * After COMMIT the batch is stored and will be acknowledged: nothing here may turn it into an
   * error answer, or the shipper would send it again and it would be stored twice. So a failed
   * reload of the catalog (which only makes new fields queryable sooner) is logged and retried
   * in the background: after 1, 2, 4, 8 and 16 s, and then every 10 s by the catalog job (jobs.ts).
   */
  private async reloadCatalog(): Promise<void> {
    try {
      await this.sources.reload();
    } catch (err) {
      this.logger?.warn(
        { err: (err as Error).message },
        'source catalog reload after an ingest commit failed; the batch is stored; retrying in the background',
      );
      this.retryReload(1_000);
    }
  }

  private retryReload(delayMs: number): void {
    if (this.reloadRetry !== undefined) return;
    this.reloadRetry = setTimeout(() => {
      this.reloadRetry = undefined;
      this.sources.reload().catch(() => {
        if (delayMs < 16_000) this.retryReload(delayMs * 2);
      });
    }, delayMs);
    this.reloadRetry.unref();
  }

  /** Forget cached partitions of a table (after retention dropped some, or the table was recreated). */
  forgetPartitions(): void {
    this.knownPartitions.clear();
  }

  private async ensurePartitionsFor(table: string, rows: LogRow[]): Promise<void> {
    const days = new Set<number>();
    for (const row of rows) days.add(dayStart(Number(row.micros / 1000n)));
    for (const day of days) {
      const key = `${table}:${day}`;
      if (this.knownPartitions.has(key)) continue;
      await ensurePartitions(this.pool, table, day, day);
      this.knownPartitions.add(key);
    }
  }
}

/** The hours (epoch ms of their start) the rows fall in. */
function hoursOf(rows: LogRow[]): Set<number> {
  const hours = new Set<number>();
  for (const row of rows) hours.add(Number(row.micros / 3_600_000_000n) * 3_600_000);
  return hours;
}

/** Work joined to a batch's transaction (LogWriter.write). */
export type InTransaction = (client: pg.PoolClient) => Promise<void>;

/** `hot`: the source's hot leaves, whose column values it computes (and notes facts of) per row. */
export type RowWriter = (client: pg.PoolClient, table: string, rows: LogRow[], hot?: FactsObserver) => Promise<void>;

/**
 * Times a batch is written again after the catalog was read anew (see write): at once, then after
 * 50, 100, 150 and 200 ms. A declaration saves the leaf a moment after it adds the column, and
 * that moment may wait for the source row's lock.
 */
const CATALOG_RETRIES = 5;

/** The hot leaves a source's rows are written with (their columns exist before the catalog lists them). */
function hotLeavesOf(source: SourceRecord): readonly HotLeaf[] {
  return source.hot_leaves ?? [];
}

const FIXED_COLUMNS = 'id, "timestamp", event_message, project, metadata, body';

function columnList(hot: FactsObserver | undefined): string {
  return `(${FIXED_COLUMNS}${(hot?.leaves ?? []).map((l) => ', ' + quoteIdent(hotColumnName(l.path))).join('')})`;
}

/**
 * The one place that decides how rows are written: `COPY … FROM STDIN` (copyRows), except on
 * PGlite (the embedded database, or any pglite-socket server), which takes the INSERT
 * (insertRows). PGlite cannot take COPY FROM STDIN over its socket: it runs each protocol
 * message to completion on its own, so the COPY's CopyData never reach the running statement;
 * tried with PGlite 0.5.14 and pglite-socket 0.2.17, the backend answered "terminating
 * connection because protocol synchronization was lost" and PGlite itself exited, taking the
 * database down for every connection. So PGlite is recognised by its version string, never by
 * trying (`db.capabilities.copyFromStdin`, src/db/capabilities.ts); test/ingest/copy.test.ts
 * covers both paths.
 */
export function rowWriterFor(capabilities: Pick<DatabaseCapabilities, 'copyFromStdin'>): RowWriter {
  return capabilities.copyFromStdin ? copyRows : insertRows;
}

/**
 * The batch as one `COPY … FROM STDIN` in text format, inside the caller's transaction (a
 * failed COPY writes nothing and aborts the transaction like a failed INSERT).
 *
 * Measured by bench/ingest-insert.ts (per 1,000 edge rows, one connection, three runs): this
 * 42–45 ms (median), of which Postgres CPU 24–29 ms, against 62–63 ms and 47–56 ms for the
 * INSERT below; Node's CPU is about the same for both (16–22 and 16–18 ms). Postgres takes the
 * rows through its multi-insert path and parses each JSON value once, straight into the column,
 * where jsonb_to_recordset parses the whole document and then builds each row's values.
 *
 * Text format: columns separated by tab, rows by newline, `\N` is NULL; in values backslash,
 * newline, carriage return and tab must be written as `\\`, `\n`, `\r`, `\t` (copyText). NUL
 * cannot be sent (nor stored in text/jsonb): normalisation rejects it before this point
 * (storable.ts; test/ingest/copy.test.ts).
 */
export async function copyRows(client: pg.PoolClient, table: string, rows: LogRow[], hot?: FactsObserver): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${qualifiedTable(table)} ${columnList(hot)} FROM STDIN`));
  // Until Postgres answers CopyInResponse the stream holds the chunks; each becomes one CopyData message.
  for (const chunk of copyChunks(rows, hot)) stream.write(chunk);
  stream.end();
  await finished(stream);
}

/** Bytes per CopyData message (a larger row gets a chunk of its own). */
const CHUNK_BYTES = 1 << 20;

/**
 * The rows in COPY text format as UTF-8, written row by row into ~1 MB buffers. Measured
 * against one string of the batch plus Buffer.from: 1.5 ms less per 1,000 edge rows (of ~10),
 * and no multi-megabyte string (or the rope it is built from) for the garbage collector.
 */
export function copyChunks(rows: LogRow[], hot?: FactsObserver): Buffer[] {
  const chunks: Buffer[] = [];
  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  for (const r of rows) {
    const line =
      copyText(r.id) +
      '\t' +
      microsToIso(r.micros) +
      '\t' +
      (r.event_message === null ? '\\N' : copyText(r.event_message)) +
      '\t' +
      (r.project === null ? '\\N' : copyText(r.project)) +
      '\t' +
      copyJson(r.metadata) +
      '\t' +
      copyJson(r.body) +
      (hot ? copyHotValues(r.metadata, hot, rowDay(r)) : '') +
      '\n';
    // A UTF-16 code unit takes at most 3 bytes of UTF-8 (a surrogate pair: 4 for two units).
    if (line.length * 3 > buffer.length - used) {
      if (used > 0) chunks.push(buffer.subarray(0, used));
      buffer = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, line.length * 3));
      used = 0;
    }
    used += buffer.write(line, used, 'utf8');
  }
  if (used > 0) chunks.push(buffer.subarray(0, used));
  return chunks;
}

const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_SPECIALS = /[\\\n\r\t]/g;
const COPY_ESCAPE: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** The hot columns of a row (storage/hotLeaves.ts hotValue), each after a tab; `\N` where the JSON read gives something else. */
function copyHotValues(metadata: unknown, hot: FactsObserver, dayMs: number): string {
  let out = '';
  for (let n = 0; n < hot.leaves.length; n++) {
    const v = hot.value(metadata, n, dayMs);
    out += '\t' + (v === null ? '\\N' : typeof v === 'string' ? copyText(v) : String(v));
  }
  return out;
}

/** The day (UTC ms) of a row's partition, which the facts of its hot leaves are kept by. */
function rowDay(r: LogRow): number {
  return dayStart(Number(r.micros / 1000n));
}

/** A text value in COPY text format: backslash, newline, carriage return and tab escaped. */
export function copyText(value: string): string {
  return COPY_SPECIAL.test(value) ? value.replace(COPY_SPECIALS, (c) => COPY_ESCAPE[c]) : value;
}

/**
 * A JSON value (or NULL) in COPY text format. JSON.stringify writes newline, carriage return,
 * tab and every other control character as escapes (`\n`, `\u0001`), so the only character
 * left to escape is the backslash of those escapes.
 */
export function copyJson(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  const json = JSON.stringify(value);
  return json.includes('\\') ? json.replace(/\\/g, '\\\\') : json;
}

/**
 * The INSERT used where COPY FROM STDIN cannot be (rowWriterFor): the rows as one JSON
 * document, unpacked server-side by `jsonb_to_recordset`. The statement text is the same for
 * every batch size, and the row count is limited only by the body limit.
 *
 * Why one jsonb document rather than six array parameters (`unnest($5::jsonb[])`): Postgres then
 * parses the JSON once and hands each `metadata`/`body` value on as binary jsonb, while an array
 * of JSON texts is escaped twice (array literal, then JSON) and parsed twice; bench/ingest-insert.ts
 * measures the variants (BENCHMARKS.md, "Ingestion").
 */
export async function insertRows(client: Pick<pg.PoolClient, 'query'>, table: string, rows: LogRow[], hot?: FactsObserver): Promise<void> {
  const leaves = hot?.leaves ?? [];
  const records = rows.map((r) => {
    const record: Record<string, unknown> = {
      i: r.id,
      t: microsToIso(r.micros),
      e: r.event_message,
      p: r.project,
      m: r.metadata,
      b: r.body,
    };
    const day = leaves.length ? rowDay(r) : 0;
    for (let n = 0; n < leaves.length; n++) record[`h${n}`] = hot!.value(r.metadata, n, day);
    return record;
  });
  const hotSelect = leaves.map((_, n) => `, r.h${n}`).join('');
  const hotTypes = leaves.map((l, n) => `, h${n} ${PG_HOT_TYPES[l.type]}`).join('');
  await client.query(
    `INSERT INTO ${qualifiedTable(table)} ${columnList(hot)}
     SELECT r.i, r.t, r.e, r.p, r.m, r.b${hotSelect}
       FROM jsonb_to_recordset($1::jsonb) AS r(i text, t timestamptz, e text, p text, m jsonb, b jsonb${hotTypes})`,
    [JSON.stringify(records)],
  );
}
