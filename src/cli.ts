/**
 * Operator commands on the service's database (`npm run cli -- <command>`):
 *
 *   keys create --name NAME --scope admin [--scope query] [limits]   prints the key (shown only this once)
 *   keys list                                              id, name, prefix, scopes, created_at, limits
 *   keys limits ID [limits]                                sets a key's limits (docs/API.md, "Rate limits")
 *   keys delete ID
 *   endpoints list
 *   sources list
 *   sources create NAME [--retention-days N]
 *   alerts list
 *   alerts create --name N --cron C --query Q [--webhook URL] [--slack URL] [--description D]
 *   alerts run ID|NAME                                     runs it now (delivered if it finds rows); prints the run
 *   import logflare --from URL [--schema S] [--events-from URL] [--events-schema S]
 *                                                          an install of the original, resumably (docs/MIGRATING.md)
 *
 * It reads the same configuration as the service (DATABASE_URL, ...) and opens the database the
 * same way (loadConfig + createContext), so migrations and the default sources are in place.
 *
 * Embedded database: without DATABASE_URL the data lives in PGlite's directory (./data), which
 * only one process may open at a time; its lock file (src/db/embedded.ts) makes the CLI refuse
 * while a service holds it: stop the service, or use the HTTP API (`POST /api/keys`, ...).
 */
import { checkSourceCreate, sourceBody } from './sources/body.js';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Scope } from './config.js';
import { createContext, type AppContext } from './context.js';
import { createLogger } from './logger.js';
import { EndpointRepository } from './endpoints/repository.js';
import { AppError } from './errors.js';
import { generateKey, SCOPES } from './auth/keys.js';
import { MAX_LIMIT, type KeyLimitFields } from './auth/keyLimits.js';
import type { ProgressOutput } from './import/logflare/progressBar.js';

export const USAGE = `Usage: npm run cli -- <command>

  keys create --name NAME --scope SCOPE [--scope SCOPE ...] [limits]   scopes: ${SCOPES.join(', ')}; prints the key once
  keys list
  keys limits ID [limits]
  keys delete ID

  limits: --rate-limit N (requests per second), --burst N, --max-queries N (uncached queries
  at once), --query-ms N (ms of query time gained per second), --query-ms-burst N (ms of query
  time held at most); 0 is no limit, "default" the service's configured default
  endpoints list
  sources list
  sources create NAME [--retention-days N]
  alerts list
  alerts create --name N --cron C --query Q [--webhook URL] [--slack URL] [--description D]
  alerts run ID|NAME      runs it now, delivered if it finds rows (docs/ALERTS.md)
  import logflare --from URL [--schema _analytics] [--events-from URL] [--events-schema S] [--batch-size N]
                          imports an install of the original service: sources, endpoints, access
                          tokens, every event; run it again to resume (docs/MIGRATING.md). Defaults:
                          the original's variables (DB_HOSTNAME…, DB_SCHEMA, POSTGRES_BACKEND_URL…)

Uses DATABASE_URL like the service. Without it (the embedded database in ./data), stop the
service first: the embedded data directory can be opened by only one process at a time.`;

/** A failure the operator can act on: printed as one line, exit code 1 (2 for usage errors). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  /** Messages for the operator (errors, the "shown once" warning). */
  err: (text: string) => void;
  /** Where a progress bar goes (stderr, redrawn in place on a terminal); none: no bar. */
  progress?: ProgressOutput;
  /** A stop request (SIGINT, SIGTERM): a long command ends cleanly and can be run again to resume. */
  signal?: AbortSignal;
}

/** Runs one command; resolves with the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    await dispatch(argv, io);
    return 0;
  } catch (err) {
    if (err instanceof CliError) {
      io.err(err.message);
      return err.exitCode;
    }
    if (err instanceof ConfigError) {
      io.err(`configuration error: ${err.message}`);
      return 1;
    }
    if (err instanceof AppError) {
      io.err(err.message);
      return 1;
    }
    io.err(`failed: ${(err as Error).message?.split('\n')[0] ?? String(err)}`);
    return 1;
  }
}

async function dispatch(argv: string[], io: CliIo): Promise<void> {
  const { values, positionals } = parse(argv);
  const [noun, verb, ...rest] = positionals;
  if (values.help || !noun) {
    io.out(USAGE);
    if (!noun && !values.help) throw new CliError('no command given', 2);
    return;
  }
  const command = `${noun} ${verb ?? ''}`.trim();
  const known = [
    'keys create',
    'keys list',
    'keys limits',
    'keys delete',
    'endpoints list',
    'sources list',
    'sources create',
    'alerts list',
    'alerts create',
    'alerts run',
    'import logflare',
  ];
  if (!known.includes(command)) throw new CliError(`unknown command "${command}"\n\n${USAGE}`, 2);

  const config = loadConfig(io.env);
  // Checked before the database is opened (on the embedded one, that would make ./data).
  if (command === 'import logflare' && values.from === undefined && config.logflare === undefined)
    throw new CliError("import logflare needs --from postgres://… (the original's database)", 2);
  const ctx = await createContext(config, createLogger(io.env.LOG_LEVEL ?? 'error')).catch((err: Error) => {
    throw new CliError(`cannot open the database: ${err.message}`);
  });
  try {
    await run(command, rest, values, ctx, io);
  } finally {
    await ctx.close();
  }
}

type Values = ReturnType<typeof parse>['values'];

/** --rate-limit, --burst, --max-queries, --query-ms, --query-ms-burst: a whole number (0: no limit) or "default" (null). */
function limitOptions(values: Values): Partial<KeyLimitFields> {
  const limits: Partial<KeyLimitFields> = {};
  const options = [
    ['rate-limit', 'rate_limit_per_second'],
    ['burst', 'rate_limit_burst'],
    ['max-queries', 'max_concurrent_queries'],
    ['query-ms', 'query_ms_per_second'],
    ['query-ms-burst', 'query_ms_burst'],
  ] as const;
  for (const [option, field] of options) {
    const raw = values[option]?.trim();
    if (raw === undefined) continue;
    if (raw === 'default') limits[field] = null;
    else if (/^\d+$/.test(raw) && Number(raw) <= MAX_LIMIT) limits[field] = Number(raw);
    else throw new CliError(`--${option} must be a whole number from 0 (no limit) to ${MAX_LIMIT}, or "default"`, 2);
  }
  return limits;
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        scope: { type: 'string', multiple: true },
        'retention-days': { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        'max-queries': { type: 'string' },
        'query-ms': { type: 'string' },
        'query-ms-burst': { type: 'string' },
        cron: { type: 'string' },
        query: { type: 'string' },
        webhook: { type: 'string' },
        slack: { type: 'string' },
        description: { type: 'string' },
        from: { type: 'string' },
        schema: { type: 'string' },
        'events-from': { type: 'string' },
        'events-schema': { type: 'string' },
        'batch-size': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n\n${USAGE}`, 2);
  }
}

async function run(command: string, args: string[], values: Values, ctx: AppContext, io: CliIo): Promise<void> {
  const print = (value: unknown) => io.out(JSON.stringify(value, null, 2));
  switch (command) {
    case 'keys create': {
      const name = values.name?.trim();
      if (!name) throw new CliError('keys create needs --name NAME', 2);
      const scopes = [...new Set(values.scope ?? [])];
      if (scopes.length === 0) throw new CliError(`keys create needs at least one --scope (${SCOPES.join(', ')})`, 2);
      const bad = scopes.find((s) => !SCOPES.includes(s as Scope));
      if (bad) throw new CliError(`unknown scope "${bad}": use ${SCOPES.join(', ')}`, 2);
      const key = generateKey();
      const record = await ctx.keys.create(name, key, scopes as Scope[], limitOptions(values));
      print({ ...record, key });
      io.err('The key is shown only this once: store it now.');
      return;
    }
    case 'keys list':
      print(await ctx.keys.list());
      return;
    case 'keys limits': {
      const id = args[0];
      if (!id) throw new CliError('keys limits needs the key id (see keys list)', 2);
      const limits = limitOptions(values);
      if (Object.keys(limits).length === 0)
        throw new CliError('keys limits needs --rate-limit, --burst, --max-queries, --query-ms or --query-ms-burst', 2);
      const record = await ctx.keys.setLimits(id, limits);
      if (!record) throw new CliError(`no API key with id "${id}"`);
      print(record);
      return;
    }
    case 'keys delete': {
      const id = args[0];
      if (!id) throw new CliError('keys delete needs the key id (see keys list)', 2);
      if (!(await ctx.keys.delete(id))) throw new CliError(`no API key with id "${id}"`);
      io.out(`deleted key ${id}`);
      return;
    }
    case 'endpoints list':
      print(await new EndpointRepository(ctx.db.knex).list());
      return;
    case 'sources list':
      await ctx.sources.reload();
      print(ctx.sources.list());
      return;
    case 'sources create': {
      const name = args[0];
      if (!name) throw new CliError('sources create needs a NAME', 2);
      const retention = values['retention-days'];
      if (retention !== undefined && !/^\d+$/.test(retention)) throw new CliError('--retention-days must be a whole number', 2);
      const body = sourceBody(retention === undefined ? { name } : { name, retention_days: Number(retention) }, checkSourceCreate);
      print(await ctx.sources.create({ ...body, name }));
      return;
    }
    case 'alerts list':
      print(await ctx.alerts.list());
      return;
    case 'alerts create': {
      if (!values.name || !values.cron || !values.query) throw new CliError('alerts create needs --name, --cron and --query', 2);
      const body = {
        name: values.name,
        cron: values.cron,
        query: values.query,
        ...(values.description !== undefined && { description: values.description }),
        ...(values.webhook !== undefined && { webhook_notification_url: values.webhook }),
        ...(values.slack !== undefined && { slack_hook_url: values.slack }),
      };
      // The same checks as POST /api/alerts: a problem is printed with its field.
      print(await ctx.alerts.create(body).catch(withLocations));
      return;
    }
    case 'alerts run': {
      const id = args[0];
      if (!id) throw new CliError('alerts run needs the alert id or name (see alerts list)', 2);
      print(await ctx.alerts.runNow(id));
      return;
    }
    case 'import logflare':
      await importCommand(values, ctx, io, print);
      return;
  }
}

/** `import logflare`: the report on stdout, the progress bar and a summary on stderr. */
async function importCommand(values: Values, ctx: AppContext, io: CliIo, print: (value: unknown) => void): Promise<void> {
  // Loaded here: the other commands start without compiling the importer (tsx in development).
  const { importLogflare, ImportRunningError, OriginalError } = await import('./import/logflare/index.js');
  const origin = ctx.config.logflare;
  const from = values.from ?? origin?.catalogUrl;
  if (!from) throw new CliError("import logflare needs --from postgres://… (the original's database)", 2);
  const schema = values.schema ?? origin?.catalogSchema ?? '_analytics';
  const batch = values['batch-size'];
  if (batch !== undefined && !(/^\d+$/.test(batch) && Number(batch) >= 1 && Number(batch) <= 100_000))
    throw new CliError('--batch-size must be a whole number from 1 to 100000', 2);
  for (const [option, url] of [
    ['--from', from],
    ['--events-from', values['events-from']],
  ] as const) {
    if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) throw new CliError(`${option} must be a postgres:// URL`, 2);
  }
  try {
    const report = await importLogflare(
      {
        knex: ctx.db.knex,
        pool: ctx.db.pool,
        sources: ctx.sources,
        keys: ctx.keys,
        writer: ctx.writer,
        defaultRetentionDays: ctx.config.retentionDays,
      },
      {
        from,
        schema,
        eventsFrom: values['events-from'] ?? (values.from === undefined ? origin?.eventsUrl : undefined),
        eventsSchema: values['events-schema'] ?? (values.schema === undefined ? origin?.eventsSchema : undefined),
        ...(batch !== undefined && { batchSize: Number(batch) }),
        progress: io.progress,
        signal: io.signal,
      },
    );
    print(report);
    const skipped = report.sources.skipped.length + report.endpoints.skipped.length + report.tokens.skipped.length;
    const rejected = report.events.reduce((n, s) => n + s.rejected, 0);
    if (skipped || rejected)
      io.err(`Not everything was imported: ${skipped} sources, endpoints or tokens and ${rejected} events; the report says why.`);
    if (report.run.stopped) io.err('Stopped: run the same command again to resume.');
  } catch (err) {
    if (err instanceof OriginalError || err instanceof ImportRunningError) throw new CliError(err.message);
    throw err;
  }
}

/** An AppError with field problems, as one message naming each field. */
function withLocations(err: unknown): never {
  if (err instanceof AppError && err.details.length)
    throw new CliError(err.details.map((d) => (d.location ? `${d.location}: ${d.message}` : d.message)).join('\n'));
  throw err;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stop = new AbortController();
  // A first Ctrl-C ends an import after its current batch (it resumes where it stopped); a
  // second one leaves at once. Other commands keep the default: leave at once.
  if (process.argv[2] === 'import')
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      process.on(signal, () => {
        if (stop.signal.aborted) process.exit(130);
        stop.abort();
      });
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(text + '\n'),
    err: (text) => process.stderr.write(text + '\n'),
    progress: process.stderr,
    signal: stop.signal,
  });
  process.exit(code);
}
