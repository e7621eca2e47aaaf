/**
 * `GET /api/sources/:idOrName/events`: a source's events matching LQL, newest first, a page at a
 * time, with a count per time bucket for the console's histogram (docs/API.md, "Searching a
 * source"). Every query is LQL translated by src/sql/ and run read-only like an endpoint's
 * (src/query/execute.ts): the same walls, the same reader role, the same timeout.
 */
import type { ReplicaRouter } from '../db/replicas.js';
import { queryError, sqlBadRequest } from '../query/errors.js';
import { parameterError } from '../errors.js';
import { encodeRows } from '../query/encode.js';
import { executeReadOnly, type QueryRun } from '../query/execute.js';
import type { SourceTable } from '../sources/schema.js';
import type { SourceService } from '../sources/service.js';
import type * as Q from '../sql/ast/queries.js';
import { SqlError, translateQuery } from '../sql/index.js';
import { searchHoursAt } from '../sql/catalog.js';
import { buildLqlQuery, type EventsWindow } from './build.js';
import { parseLql } from './parser.js';
import type { LqlRules } from './rules.js';
import type { TailQuery } from './tail.js';

export const SEARCH_DEFAULT_LIMIT = 100;
export const SEARCH_MAX_LIMIT = 1000;
/** Without `start`, and without a `t:` filter, the search covers the last hour. */
export const SEARCH_DEFAULT_SPAN_MS = 3_600_000;
/** Bucket widths of the histogram; the first giving at most HISTOGRAM_MAX_BUCKETS over the window. */
const BUCKET_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 604800];
export const HISTOGRAM_MAX_BUCKETS = 120;

export interface SearchRequest {
  lql?: string;
  start?: string;
  end?: string;
  limit?: string;
  cursor?: string;
}

export interface SearchAnswer {
  /** Events (or, for a `c:` query, chart points `{timestamp, value}`), newest first. */
  result: Record<string, unknown>[];
  /** Give it back as `cursor` for the next (older) page; null on the last page and for charts. */
  cursor: string | null;
  /** `chart` when the LQL has `c:`. */
  kind: 'events' | 'chart';
  /** The window searched (ISO), and the matching events per bucket of it. */
  window: { start: string | null; end: string | null };
  histogram: { interval_seconds: number; buckets: { timestamp: string; count: number }[] };
}

export interface EventSearchDeps {
  sources: Pick<SourceService, 'get' | 'lookup'>;
  reads: Pick<ReplicaRouter, 'run'>;
  queryTimeoutMs: number;
  /** The database takes a pipelined batch (`db.capabilities.pipelinedBatch`). */
  pipelined: boolean;
}

export class EventSearch {
  constructor(private readonly deps: EventSearchDeps) {}

  async search(idOrName: string, request: SearchRequest): Promise<SearchAnswer> {
    const record = await this.deps.sources.get(idOrName);
    const source = this.deps.sources.lookup(record.name);
    if (!source) throw parameterError('idOrName', 'invalidParameter', `Source "${idOrName}" has no table yet.`);
    const text = request.lql ?? '';
    const rules = this.parse(text);
    const limit = intParam('limit', request.limit, SEARCH_DEFAULT_LIMIT, 1, SEARCH_MAX_LIMIT);
    const before = request.cursor === undefined || request.cursor === '' ? undefined : decodeCursor(request.cursor);
    const { start, end } = windowOf(request, rules);
    const window: EventsWindow = { ...(start && { start }), ...(end && { end }) };

    const main = this.run(text, rules, source, { ...window, limit: limit + 1, ...(before && { before }) });
    const histogramSeconds = bucketSeconds(start ?? (await this.oldest(text, rules, source, window)), end ?? new Date().toISOString());
    const histogram = this.run(text, rules, source, { ...window, histogramSeconds });
    const [rows, buckets] = await Promise.all([main, histogram]);
    const chart = rules.chart !== undefined;
    const page = chart ? rows.rows : rows.rows.slice(0, limit);
    const more = !chart && rows.rows.length > limit;
    return {
      result: page,
      cursor: more ? encodeCursor(page[page.length - 1]) : null,
      kind: chart ? 'chart' : 'events',
      window: { start: start ?? null, end: end ?? null },
      histogram: {
        interval_seconds: histogramSeconds,
        buckets: buckets.rows.map((b) => ({ timestamp: microsToIso(b.timestamp as number), count: Number(b.value) })),
      },
    };
  }

  /**
   * Live tail of a source (tail.ts): the LQL checked now, so a problem answers 400 before the
   * stream starts; then the query of each batch of arrivals.
   */
  async prepareTail(idOrName: string, text: string): Promise<{ source: string; rules: LqlRules; query: TailQuery }> {
    const record = await this.deps.sources.get(idOrName);
    const rules = this.parse(text);
    if (rules.chart) throw parameterError('lql', 'invalidParameter', 'Live tail streams events: a c: chart cannot be tailed.');
    const query: TailQuery = async (r, ids, from, to) => {
      const source = this.deps.sources.lookup(record.name);
      if (!source) return [];
      const window: EventsWindow = { start: microsToIso(Number(from)), end: microsToIso(Number(to) + 1), ids, ascending: true };
      return (await this.run(text, r, source, window)).rows;
    };
    const source = this.deps.sources.lookup(record.name);
    if (source) await query(rules, ['00000000-check'], 0n, 0n); // translates and runs once over nothing: a bad field is a 400 now
    return { source: record.name, rules, query };
  }

  private parse(text: string): LqlRules {
    try {
      return parseLql(text);
    } catch (err) {
      if (err instanceof SqlError) throw sqlBadRequest(err, 'lql');
      throw err;
    }
  }

  /** The oldest matching event, for the histogram of a search bounded only by its `t:` filters. */
  private async oldest(text: string, rules: LqlRules, source: SourceTable, window: EventsWindow): Promise<string> {
    const timestampOnly: LqlRules = { ...rules, chart: undefined, selects: [{ kind: 'select', path: 'timestamp', pos: 0 }] };
    const oldestFirst = (q: Q.Query): Q.Query => ({
      ...q,
      orderBy: q.orderBy.map((o) => ({ ...o, desc: false })),
      limit: { kind: 'literal', pos: 0, type: 'INT64', value: '1' },
    });
    const first = await this.run(text, timestampOnly, source, window, oldestFirst);
    const micros = first.rows[0]?.timestamp;
    return typeof micros === 'number' ? microsToIso(micros) : new Date(Date.now() - SEARCH_DEFAULT_SPAN_MS).toISOString();
  }

  private async run(
    text: string,
    rules: LqlRules,
    source: SourceTable,
    window: EventsWindow,
    reshape: (q: Q.Query) => Q.Query = (q) => q,
  ): Promise<{ rows: Record<string, unknown>[] }> {
    let sql: string;
    let names: string[];
    try {
      const parsed = reshape(buildLqlQuery(rules, { kind: 'source', source }, window).query);
      const translation = translateQuery({
        query: text,
        parsed,
        sources: this.deps.sources.lookup,
        searchHours: searchHoursAt(Date.now()),
      });
      sql = translation.sql;
      names = translation.columns.map((c) => c.name);
    } catch (err) {
      if (err instanceof SqlError) throw sqlBadRequest(err, 'lql');
      throw err;
    }
    let run: QueryRun;
    try {
      run = await this.deps.reads.run((target) =>
        executeReadOnly(target.pool, sql, [], {
          timeoutMs: this.deps.queryTimeoutMs,
          useReaderRole: target.useReaderRole,
          pipelined: this.deps.pipelined,
        }),
      );
    } catch (err) {
      throw queryError(err);
    }
    return { rows: encodeRows(run.fields, names, run.rows) };
  }
}

function intParam(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw parameterError(name, 'invalidParameter', `"${name}" must be an integer from ${min} to ${max}.`);
  return value;
}

function instantParam(name: string, text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (Number.isNaN(ms)) throw parameterError(name, 'invalidParameter', `"${name}" must be an ISO 8601 timestamp or Unix milliseconds.`);
  return new Date(ms).toISOString();
}

/** `start`/`end` as given; without either and without a `t:` filter, the last hour. */
function windowOf(request: SearchRequest, rules: LqlRules): { start?: string; end?: string } {
  let start = instantParam('start', request.start);
  const end = instantParam('end', request.end);
  if (start && end && Date.parse(start) >= Date.parse(end))
    throw parameterError('start', 'invalidParameter', '"start" must be before "end".');
  const hasTime = rules.filters.some((f) => f.path === 'timestamp');
  if (!start && !hasTime) start = new Date((end ? Date.parse(end) : Date.now()) - SEARCH_DEFAULT_SPAN_MS).toISOString();
  return { ...(start && { start }), ...(end && { end }) };
}

function bucketSeconds(start: string, end: string): number {
  const span = Math.max(1, (Date.parse(end) - Date.parse(start)) / 1000);
  return BUCKET_SECONDS.find((s) => span / s <= HISTOGRAM_MAX_BUCKETS) ?? BUCKET_SECONDS[BUCKET_SECONDS.length - 1];
}

/** Unix microseconds (how rows carry TIMESTAMPs) → ISO 8601 with all six fraction digits. */
export function microsToIso(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString();
  const fraction = String(((micros % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 19)}.${fraction}Z`;
}

/** The last row's (timestamp, id), opaque to callers. */
function encodeCursor(row: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify([microsToIso(row.timestamp as number), row.id])).toString('base64url');
}

function decodeCursor(text: string): { timestamp: string; id: string } {
  try {
    const [timestamp, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof timestamp === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(timestamp))) return { timestamp, id };
  } catch {
    // answered below
  }
  throw parameterError('cursor', 'invalidParameter', '"cursor" is not a cursor this search gave.');
}
