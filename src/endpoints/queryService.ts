/**
 * Running an endpoint: look it up, validate its parameters, translate its SQL (or the caller's
 * sandboxed `sql`), run it read-only, encode and redact the rows, and answer from the result
 * cache where the endpoint caches.
 */
import { createHash } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { SourceService } from '../sources/service.js';
import { NotFoundError, parameterError, UnprocessableError } from '../errors.js';
import type { CacheOutcome, CacheRequest, ResultCache, WarmSpec } from '../cache/types.js';
import { executeReadOnly } from '../query/execute.js';
import type { HourlyBackground } from '../query/hourlyBackground.js';
import { runSplit, shapeOf, type Shape, type SplitStats } from '../query/hourlySplit.js';
import type { KeyLimiter, LimitedKey } from '../rateLimit/index.js';
import type { Grant } from '../rateLimit/scheduler.js';
import type { ReplicaRouter } from '../db/replicas.js';
import { encodeResultBody, encodeRows } from '../query/encode.js';
import { redactValue } from '../query/redact.js';
import { initTranslator, SqlError, SqlNestingError, type Translation } from '../sql/index.js';
import { SEARCH_HOUR_MS, searchHoursAt } from '../sql/catalog.js';
import { loadReadable, translateNested } from './nesting.js';
import { EndpointRepository, type EndpointRecord } from './repository.js';
import { queryWarnings, type QueryWarning } from './warnings.js';
import { LookupCache } from '../lookupCache.js';
import { LRUCache } from 'lru-cache';
import { LRU_READ } from '../lruRead.js';
import { TranslationCache, translationKey } from './translationCache.js';
import { collectInput, sandboxLqlOf, sandboxSqlOf, validateParameters, type ParamValues } from './params.js';
import { lqlSandbox } from '../lql/index.js';
import { queryError, sqlBadRequest } from '../query/errors.js';

export interface RunRequest {
  /** Query-string (and JSON body) values, all strings. */
  input: ParamValues;
  /** The caller asked for redaction (`LF-ENDPOINT-REDACT-PII: true`). It can only add redaction. */
  redact: boolean;
  /** The caller's key: its uncached queries count against its concurrent-query limit (src/rateLimit/). */
  key?: LimitedKey;
  /**
   * Decides whether the caller may run the endpoint, once it is looked up (undefined: no such
   * endpoint), by throwing the refusal (src/endpoints/access.ts), before anything else is done;
   * answers the key its queries are charged to, when it is not `key` (a public endpoint's caller).
   */
  authorize?: (endpoint: EndpointRecord | undefined) => Promise<LimitedKey | undefined>;
}

export interface RunResult {
  body: string;
  cache: CacheOutcome['status'] | 'BYPASS';
}

/** How long a looked-up endpoint is reused before asking the database again (other replicas' changes show after this). */
const ENDPOINT_TTL_MS = 1_000;
/** perf: a used endpoint is looked up again in the background this long before it expires, so no request waits for the lookup. */
const ENDPOINT_REFRESH_AHEAD_MS = 300;
/** Prepared runs kept for the GET fast path (all endpoints together), and the longest query string memoised. */
const PREPARED_RUNS_MAX = 2_000;
const PREPARED_QUERY_MAX_CHARS = 4_096;

/** What the GET fast path (queryRoutes.ts) hands to the result cache: exactly what `run` would fetch for the same call. */
export interface PreparedRun {
  /** The endpoint's id and whether it needs a key: the fast path checks the caller's scopes with them. */
  endpoint: Pick<EndpointRecord, 'id' | 'enable_auth'>;
  request: CacheRequest;
  /** Runs the query for the caller `key` (within its concurrent-query limit). */
  compute: (key?: LimitedKey) => Promise<string>;
}

/** The key of a prepared run: endpoint version, redaction header and raw query string. */
function preparedRunKey(endpoint: EndpointRecord, redact: boolean, rawQuery: string): string {
  return `${redact ? 'r' : 'p'}${endpoint.id}:${endpoint.version}?${rawQuery}`;
}

export interface QueryServiceDeps {
  knex: Knex;
  /** Where endpoint queries run: a healthy read replica, else the primary (the reader pool when there is one). */
  reads: Pick<ReplicaRouter, 'run'>;
  /** The fair scheduler of uncached queries and the keys' hard caps (src/rateLimit/). */
  limiter: Pick<KeyLimiter, 'query'>;
  sources: Pick<SourceService, 'catalogVersion' | 'lookup'>;
  cache: Pick<ResultCache, 'fetch' | 'startWarming'>;
  metrics: Pick<Metrics, 'queryRuns' | 'hourlyEvents'>;
  logger: Logger;
  queryTimeoutMs: number;
  /** The database takes a pipelined batch (`db.capabilities.pipelinedBatch`; PGlite is not known to). */
  pipelined: boolean;
  /** With Redis: aggregate queries over a window run as cached hourly partials (src/query/hourlySplit.ts), missing hours computed in the background. */
  hourly?: HourlyBackground;
}

export class EndpointQueryService {
  private readonly repository: EndpointRepository;
  /** Endpoints by id or name; a missing one is not cached (a new endpoint shows at once). */
  private readonly endpoints: LookupCache<EndpointRecord | undefined>;
  /** By endpoint version, redaction and query string: a version's prepared runs never go stale, the least recently used go to bound memory. */
  private readonly runs = new LRUCache<string, PreparedRun>({ max: PREPARED_RUNS_MAX });
  private readonly translations = new TranslationCache();

  constructor(private readonly deps: QueryServiceDeps) {
    this.repository = new EndpointRepository(deps.knex);
    this.endpoints = new LookupCache({
      ttlMs: ENDPOINT_TTL_MS,
      refreshAheadMs: ENDPOINT_REFRESH_AHEAD_MS,
      maxEntries: 1_000,
      load: (idOrName) => this.repository.find(idOrName),
      keep: (record) => record !== undefined,
    });
  }

  /** Loads the SQL validator, starts warming. */
  async init(): Promise<void> {
    await initTranslator();
    this.deps.cache.startWarming((spec) => this.rerun(spec));
  }

  /** After a change on this replica: the next request sees it at once. */
  forgetEndpoints(): void {
    this.endpoints.clear();
    this.runs.clear();
  }

  async run(idOrName: string, request: RunRequest): Promise<RunResult> {
    if (request.authorize) request = { ...request, key: (await request.authorize(await this.endpoints.get(idOrName))) ?? request.key };
    const endpoint = await this.find(idOrName);
    const spec = this.specOf(endpoint, request);
    if (endpoint.cache_duration_seconds <= 0) {
      return { body: await this.compute(endpoint, spec, request.key), cache: 'BYPASS' };
    }
    const outcome = await this.deps.cache.fetch(
      { key: cacheKey(spec), ttlSeconds: endpoint.cache_duration_seconds, warmPeriodSeconds: endpoint.cache_warming_seconds, spec },
      () => this.compute(endpoint, spec, request.key),
    );
    return { body: outcome.body, cache: outcome.status };
  }

  /** What would run, without running it: `GET /api/endpoints/:idOrName/sql`. */
  async plan(idOrName: string, request: RunRequest, explain: boolean): Promise<QueryPlan> {
    const endpoint = await this.find(idOrName);
    const spec = this.specOf(endpoint, request);
    const { translation, values } = await this.prepare(endpoint, spec);
    const out: QueryPlan = {
      sql: translation.sql,
      parameters: translation.parameters.map((name, i) => ({ name, value: values[i] ?? null })),
      warnings: queryWarnings(translation.warnings, spec.sql === undefined ? 'query' : 'sql'),
    };
    if (explain) {
      const run = await this.execute(`EXPLAIN (FORMAT JSON) ${translation.sql}`, values);
      out.plan = JSON.parse(run.rows[0][0]!);
    }
    return out;
  }

  /**
   * perf: the fast path of a GET (queryRoutes.ts). For an endpoint this process looked up within
   * ENDPOINT_TTL_MS and that caches its results, the cache request `run` would make for the same
   * raw query string and redaction header: same parameters, validation and key. Memoised per
   * endpoint version, so a repeated call is not parsed, validated and hashed again. Undefined when
   * `run` must answer instead: the endpoint is not at hand or does not cache, or the input is
   * refused (`run` then throws the same error).
   */
  preparedRun(idOrName: string, rawQuery: string, redact: boolean): PreparedRun | undefined {
    const endpoint = this.endpoints.peek(idOrName)?.value;
    if (!endpoint || endpoint.cache_duration_seconds <= 0) return undefined;
    const key = rawQuery.length <= PREPARED_QUERY_MAX_CHARS ? preparedRunKey(endpoint, redact, rawQuery) : undefined;
    let prepared = key === undefined ? undefined : this.runs.get(key, LRU_READ);
    if (prepared) return prepared;
    try {
      const spec = this.specOf(endpoint, { input: collectInput(parseQueryString(rawQuery), undefined), redact });
      prepared = {
        endpoint: { id: endpoint.id, enable_auth: endpoint.enable_auth },
        request: {
          key: cacheKey(spec),
          ttlSeconds: endpoint.cache_duration_seconds,
          warmPeriodSeconds: endpoint.cache_warming_seconds,
          spec,
        },
        compute: (key) => this.compute(endpoint, spec, key),
      };
    } catch {
      return undefined;
    }
    if (key !== undefined) this.runs.set(key, prepared);
    return prepared;
  }

  private specOf(endpoint: EndpointRecord, request: RunRequest): WarmSpec {
    const params = validateParameters(endpoint.parameters, request.input);
    const sql = sandboxSqlOf(request.input);
    const lql = sql === undefined ? sandboxLqlOf(endpoint, request.input) : undefined;
    if (sql !== undefined && !endpoint.sandboxable) {
      throw parameterError(
        'sql',
        'invalidParameter',
        `Endpoint "${endpoint.name}" does not allow query sandboxing, so "sql" cannot be given.`,
      );
    }
    return {
      endpointId: endpoint.id,
      version: endpoint.version,
      params,
      ...(sql === undefined ? {} : { sql }),
      ...(lql === undefined ? {} : { lql }),
      redact: endpoint.redact_pii || request.redact,
    };
  }

  /** `key`: the caller, whose concurrent-query limit the database query runs within; none for warming. */
  private async compute(endpoint: EndpointRecord, spec: WarmSpec, key?: LimitedKey): Promise<string> {
    const { translation, values } = await this.prepare(endpoint, spec);
    const run = await this.deps.limiter
      .query(key, (grant) => this.executeSplit(translation, values, grant))
      .then(
        (r) => (this.deps.metrics.queryRuns.inc({ outcome: 'ok' }), r),
        (err) => (this.deps.metrics.queryRuns.inc({ outcome: 'error' }), Promise.reject(queryError(err))),
      );
    const names = translation.columns.map((c) => c.name);
    if (!spec.redact) return encodeResultBody(run.fields, names, run.rows);
    return JSON.stringify({ result: redactValue(encodeRows(run.fields, names, run.rows)) });
  }

  /** The translation of a spec and the value of each of its `$n`, in order (missing optional ones are NULL). */
  private async prepare(endpoint: EndpointRecord, spec: WarmSpec): Promise<{ translation: Translation; values: Array<string | null> }> {
    const translation = await this.translate(endpoint, spec.sql, spec.lql);
    return { translation, values: translation.parameters.map((name) => spec.params[name] ?? null) };
  }

  /** `grant`: the scheduler's slot (src/rateLimit/scheduler.ts): whether to run without parallel workers. */
  private execute(sql: string, values: Array<string | null | Array<string | null>>, grant?: Grant, noteTarget = false, workMemKb?: number) {
    // The embedded PGlite is not known to take a pipelined batch: it gets the transaction in three round trips.
    // On a read replica when one is healthy (src/db/replicas.ts), else on the primary.
    return this.deps.reads.run((target) =>
      executeReadOnly(target.pool, sql, values, {
        timeoutMs: this.deps.queryTimeoutMs,
        serial: grant?.serial ?? false,
        useReaderRole: target.useReaderRole,
        pipelined: this.deps.pipelined,
        workMemKb,
      }).then((run) => (noteTarget ? { ...run, cacheable: target.name === 'primary' } : run)),
    );
  }

  /**
   * The query as cached hourly partials and a merge when it decomposes (src/query/hourlySplit.ts),
   * all within the caller's one scheduler slot; else, or without Redis, whole. Whole too when most
   * closed hours are missing: they are computed afterwards in the background.
   */
  private async executeSplit(translation: Translation, values: Array<string | null>, grant?: Grant) {
    const hourly = this.deps.hourly;
    if (hourly) {
      const stats: SplitStats = { cachedHours: 0, computedHours: 0, pieces: 0 };
      // A replica may lag behind a write version bump: what it computes is used, never cached.
      const run = (sql: string, v: Array<string | null | Array<string | null>>, o?: { workMemKb?: number }) =>
        this.execute(sql, v, grant, true, o?.workMemKb);
      const split = await runSplit(translation, values, run, hourly.store, Date.now(), stats, {
        sourceOf: hourly.sourceOf,
        background: hourly,
      });
      if (stats.coldLoads) this.deps.metrics.hourlyEvents.inc({ event: 'cold' });
      if (split) {
        this.deps.metrics.hourlyEvents.inc({ event: 'split' });
        return split;
      }
    }
    return this.execute(translation.sql, values, grant);
  }

  /**
   * The hourly split's shape of a load of endpoint `idOrName` with `input` (query-string values,
   * `sql` among them), as that load would register it: what src/query/reportWarmup.ts computes
   * hours for. Undefined without the split, for an unknown endpoint, refused input, or a query
   * that does not decompose.
   */
  async splitShape(idOrName: string, input: Record<string, string>): Promise<Shape | undefined> {
    const hourly = this.deps.hourly;
    const endpoint = hourly && (await this.endpoints.get(idOrName));
    if (!hourly || !endpoint) return undefined;
    try {
      const spec = this.specOf(endpoint, { input: collectInput(input, undefined), redact: false });
      const { translation, values } = await this.prepare(endpoint, spec);
      return shapeOf(translation, values, hourly.sourceOf);
    } catch {
      return undefined;
    }
  }

  /** Warming: the same spec again, unless the endpoint changed or is gone (then the key is dropped). */
  private async rerun(spec: WarmSpec): Promise<string> {
    const endpoint = await this.repository.find(spec.endpointId);
    if (!endpoint || endpoint.version !== spec.version) throw new Error('endpoint changed or deleted');
    return this.compute(endpoint, spec);
  }

  private async find(idOrName: string): Promise<EndpointRecord> {
    const record = await this.endpoints.get(idOrName);
    if (!record)
      throw new NotFoundError(`No endpoint named or with id "${idOrName}".`, [
        { domain: 'endpoints', reason: 'notFound', message: 'unknown endpoint', location: 'endpoint' },
      ]);
    return record;
  }

  /**
   * Translations are pure functions of the endpoint version, the source catalog and `sql`: cached.
   * An endpoint that reads endpoints (nesting.ts) gets them from the database, not from the 1 s
   * lookup cache, on each translation: a change of one of them bumps this endpoint's version in the
   * same transaction, so once this version is seen their new text is there to read.
   */
  private async translate(endpoint: EndpointRecord, sandboxSql: string | undefined, lql?: string): Promise<Translation> {
    // The search hours change every hour: a translation is kept for the hour it was made in (one
    // made before still answers the same rows, reading the newer hours without their indexes).
    const nowMs = Date.now();
    const hour = Math.floor(nowMs / SEARCH_HOUR_MS);
    const key = `${hour}:${translationKey(endpoint.id, endpoint.version, this.deps.sources.catalogVersion, sandboxSql, lql)}`;
    const cached = this.translations.get(key);
    if (cached) return cached;
    const sources = this.deps.sources.lookup;
    const readable = await loadReadable(endpoint.query, sources, (names) => this.repository.findByNames(names));
    let translation: Translation;
    try {
      const caller = lql === undefined ? { sandboxSql } : lqlSandbox(lql, endpoint.query);
      translation = translateNested(
        { name: endpoint.name, query: endpoint.query, ...caller, maxRows: endpoint.max_rows, searchHours: searchHoursAt(nowMs) },
        sources,
        (n) => readable.get(n),
      ).translation;
    } catch (err) {
      if (err instanceof SqlNestingError) throw nestingError(err);
      if (err instanceof SqlError) throw sqlBadRequest(err, lql !== undefined ? 'lql' : sandboxSql === undefined ? 'query' : 'sql');
      throw err;
    }
    const declared = new Set(endpoint.parameters.map((p) => p.name));
    const unknown = translation.parameters.find((name) => !declared.has(name));
    if (unknown && sandboxSql === undefined && lql === undefined) {
      // Only through an endpoint it reads that changed without this one being re-checked (a race of two changes).
      throw new UnprocessableError(
        `Endpoint "${endpoint.name}" uses @${unknown} (through an endpoint it reads) but does not declare it; save it again to declare it.`,
        [{ domain: 'endpoint', reason: 'undeclaredParameter', message: `@${unknown} is not declared`, location: `parameters.${unknown}` }],
      );
    }
    if (unknown)
      throw parameterError(
        'sql',
        'invalidParameter',
        `@${unknown} is not a parameter of endpoint "${endpoint.name}"; declared: ${[...declared].map((n) => '@' + n).join(', ') || 'none'}.`,
      );
    this.translations.set(key, translation);
    return translation;
  }
}

/** What `GET /api/endpoints/:idOrName/sql` answers. */
export interface QueryPlan {
  sql: string;
  parameters: Array<{ name: string; value: string | null }>;
  /** Fields no event has brought yet (they read as NULL), positioned in the endpoint query or the caller's `sql`. */
  warnings: QueryWarning[];
  plan?: unknown;
}

/** `ep:<id>:<version>:<hash>`: declared parameter values (sorted), `sql` and redaction. */
export function cacheKey(spec: WarmSpec): string {
  const params = Object.keys(spec.params)
    .sort()
    .map((k) => [k, spec.params[k]]);
  const hash = createHash('sha256')
    .update(JSON.stringify([params, spec.sql ?? null, spec.redact, ...(spec.lql === undefined ? [] : [spec.lql])]))
    .digest('base64url');
  return `ep:${spec.endpointId}:${spec.version}:${hash}`;
}

/** Endpoints that read each other in a cycle or too deeply: the definitions must change, 422 naming the chain. */
function nestingError(err: SqlNestingError): UnprocessableError {
  return new UnprocessableError(`The endpoint's query cannot run: ${err.message}.`, [
    { domain: 'endpoint', reason: 'nestingError', message: err.message, location: `query:${err.line}:${err.column}` },
  ]);
}
