/**
 * `import logflare`: an install of the original service (Logflare, e.g. the analytics container
 * of Supabase's self-hosted stack) brought into this one: sources, endpoints, access tokens, then
 * every event (docs/MIGRATING.md). The CLI runs it (`npm run cli -- import logflare --from URL`),
 * and so does the service at start when it is given the original's environment
 * (src/main.ts). One import runs at a time per database (an advisory lock); running it again
 * imports nothing twice.
 */
import type pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from '../../logger.js';
import type { SourceService } from '../../sources/service.js';
import type { LogWriter } from '../../ingest/write.js';
import type { ApiKeyRepository } from '../../auth/keys.js';
import { EndpointManagementService } from '../../endpoints/managementService.js';
import { connectOriginal, OriginalError, readCatalog } from './original.js';
import { importCatalog, type CatalogReport } from './catalog.js';
import { importEvents, type SourceEventsReport } from './events.js';
import { ProgressBar, type ProgressOutput } from './progressBar.js';

export { OriginalError } from './original.js';

export interface LogflareImportOptions {
  /** The original's database (its catalog: sources, endpoints, tokens). */
  from: string;
  /** Its schema there (the original's DB_SCHEMA; `_analytics` in the Supabase stack). */
  schema: string;
  /** Where its events are (the original's POSTGRES_BACKEND_URL), when elsewhere. */
  eventsFrom?: string;
  /** Their schema (POSTGRES_BACKEND_SCHEMA); default `schema`. */
  eventsSchema?: string;
  /** Events per batch (one transaction each). */
  batchSize?: number;
  /** Where the progress bar goes (stderr); none: no bar. */
  progress?: ProgressOutput;
  /** A stop request: the run ends after the batch in flight and resumes next time. */
  signal?: AbortSignal;
  nowMs?: number;
}

export interface ImportReport extends CatalogReport {
  events: SourceEventsReport[];
  /** Events read by this run (imported or refused), its length and rate. */
  run: { events: number; seconds: number; events_per_second: number; stopped: boolean };
}

export interface ImportDeps {
  knex: Knex;
  pool: pg.Pool;
  sources: SourceService;
  keys: ApiKeyRepository;
  writer: LogWriter;
  defaultRetentionDays: number;
}

export const DEFAULT_BATCH_SIZE = 2_000;

/** The advisory lock of an import, per database (any 64-bit number no other part of the service uses). */
const IMPORT_LOCK = 7_424_117_020_281;

export class ImportRunningError extends Error {}

export async function importLogflare(deps: ImportDeps, options: LogflareImportOptions): Promise<ImportReport> {
  const lock = await deps.pool.connect();
  try {
    const { rows } = await lock.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [IMPORT_LOCK]);
    if (!rows[0].ok)
      throw new ImportRunningError(
        'another import is running on this database (the service at start, or another CLI); try again once it ends',
      );
    try {
      return await run(deps, options);
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [IMPORT_LOCK]);
    }
  } finally {
    lock.release();
  }
}

async function run(deps: ImportDeps, options: LogflareImportOptions): Promise<ImportReport> {
  const startedAt = Date.now();
  const [{ id: runId }] = await deps.knex('logflare_import_runs').insert({}).returning<{ id: string }[]>('id');
  const catalogClient = await connectOriginal(options.from, "the original's database (--from)");
  let eventsClient: pg.Client | undefined;
  try {
    const catalog = await readCatalog(catalogClient, options.schema);
    const endpoints = new EndpointManagementService(deps.knex, deps.sources.lookup);
    const { report, sources } = await importCatalog(
      { knex: deps.knex, sources: deps.sources, endpoints, keys: deps.keys, defaultRetentionDays: deps.defaultRetentionDays },
      catalog,
    );
    eventsClient =
      options.eventsFrom && options.eventsFrom !== options.from
        ? await connectOriginal(options.eventsFrom, "the original's event database (--events-from)")
        : catalogClient;
    const progress = new ProgressBar(options.progress);
    const events = await importEvents({ pool: deps.pool, sources: deps.sources, writer: deps.writer }, eventsClient, sources, {
      schema: options.eventsSchema ?? options.schema,
      batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
      nowMs: options.nowMs ?? Date.now(),
      progress,
      signal: options.signal,
    });
    progress.finish();
    const seconds = (Date.now() - startedAt) / 1000;
    const stopped = options.signal?.aborted ?? false;
    const full: ImportReport = {
      ...report,
      events,
      run: { events: progress.runEvents, seconds: Math.round(seconds * 10) / 10, events_per_second: Math.round(progress.rate()), stopped },
    };
    await deps
      .knex('logflare_import_runs')
      .where({ id: runId })
      .update({ report: JSON.stringify(full), ...(!stopped && { finished_at: deps.knex.fn.now() }) });
    return full;
  } finally {
    if (eventsClient && eventsClient !== catalogClient) await eventsClient.end().catch(() => undefined);
    await catalogClient.end().catch(() => undefined);
  }
}

/**
 * At start, with the original's environment (config.logflare): imports once, in the background,
 * unless an import has finished before. A database without the original's tables (a new stack)
 * has nothing to import: one line says so.
 */
export async function importAtStart(deps: ImportDeps, options: LogflareImportOptions, logger: Logger): Promise<void> {
  const finished = await deps.knex('logflare_import_runs').whereNotNull('finished_at').count<{ n: string }[]>('* as n');
  if (Number(finished[0].n) > 0) return;
  logger.info({ schema: options.schema, eventsSchema: options.eventsSchema }, "importing the original service's data (docs/MIGRATING.md)");
  try {
    const report = await importLogflare(deps, options);
    const events = report.events.reduce((n, s) => n + s.imported, 0);
    const notImported = report.sources.skipped.length + report.endpoints.skipped.length + report.tokens.skipped.length;
    logger.info(
      {
        sources: report.sources.imported.length + report.sources.adopted.length + report.sources.existing.length,
        endpoints: report.endpoints.imported.length + report.endpoints.existing.length,
        tokens: report.tokens.imported + report.tokens.existing,
        events,
        notImported,
        stopped: report.run.stopped,
      },
      notImported
        ? 'import of the original service: done, some items were not imported (their reasons: logflare_import_runs.report, or run the CLI import)'
        : 'import of the original service: done',
    );
  } catch (err) {
    if (err instanceof OriginalError) logger.info({ reason: err.message }, 'no data of the original service to import');
    else if (err instanceof ImportRunningError) logger.info(err.message);
    else logger.warn({ err: (err as Error).message }, 'import of the original service failed; it resumes at the next start');
  }
}
