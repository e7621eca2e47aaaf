/**
 * `npm start`: configuration, database (embedded when none is configured), migrations,
 * sources, seeds, background jobs, HTTP. SIGTERM/SIGINT: stop accepting, finish in-flight
 * requests, close pools, exit 0, within SHUTDOWN_TIMEOUT_MS (else exit 1 with a log line; a close
 * that fails is logged and exits 1 too). A configuration or start-up error exits 1 with one line,
 * after closing what the start had opened.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { createContext, type AppContext } from './context.js';
import { createApp } from './app.js';
import { createHttpServer } from './http/server.js';
import { ensureFirstKey, loadDemoDataOnce } from './seed.js';
import { startBackgroundJobs } from './jobs.js';
import { stopWithin } from './lifecycle.js';
import { hostOf, splitDatabaseUrl } from './db/databaseUrl.js';
import { importAtStart } from './import/logflare/index.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) exitWith(`configuration error: ${err.message}`);
    throw err;
  }
  const logger = createLogger(config.logLevel);

  let ctx: AppContext;
  try {
    ctx = await createContext(config, logger);
  } catch (err) {
    exitWith(`cannot start: ${describeStartError(err, config.databaseUrl)}`);
  }
  let jobs: ReturnType<typeof startBackgroundJobs> | undefined;
  let server: Server;
  try {
    if (config.loadDemoData) await loadDemoDataOnce({ sources: ctx.sources, pool: ctx.db.pool, writer: ctx.writer, logger: ctx.logger });
    const keyFile = await ensureFirstKey({ embedded: ctx.embedded, keys: ctx.keys, dataDir: ctx.config.dataDir });
    if (keyFile) logger.info({ keyFile }, 'created an admin API key for this embedded instance; it is in keyFile');
    jobs = startBackgroundJobs(ctx);
    server = await listen(config, await createApp(ctx));
  } catch (err) {
    jobs?.stop();
    await stopWithin(config.shutdownTimeoutMs, logger, [{ name: 'close database and cache', run: () => ctx.close() }]);
    exitWith(err instanceof ListenError ? err.message : `cannot start: ${describeStartError(err, config.databaseUrl)}`);
  }
  const running = jobs;
  logger.info({ port: config.port }, 'logquery is serving');

  // Given the original's environment (the Supabase stack's analytics container), its data comes
  // over in the background while the service serves (docs/MIGRATING.md); a stop ends it after
  // the batch in flight and the next start resumes it.
  const importing = new AbortController();
  const origin = config.logflare;
  const imported = origin?.importOnStart
    ? importAtStart(
        {
          knex: ctx.db.knex,
          pool: ctx.db.pool,
          sources: ctx.sources,
          keys: ctx.keys,
          writer: ctx.writer,
          defaultRetentionDays: config.retentionDays,
        },
        {
          from: origin.catalogUrl,
          schema: origin.catalogSchema,
          eventsFrom: origin.eventsUrl,
          eventsSchema: origin.eventsSchema,
          signal: importing.signal,
        },
        logger,
      )
    : Promise.resolve();

  // Requests in flight per connection. On SIGTERM, server.close() stops accepting and
  // closeIdleConnections() closes keep-alive connections between requests, but Node counts a
  // connection that has not sent its first request yet as busy (until headersTimeout, 60 s),
  // so one idle client (a load balancer's pre-opened connection, a port check) held the exit
  // up for a minute. Here every connection with nothing in flight is ended at once, and the
  // others as soon as their last response is sent (test/hardening/sigterm.test.ts).
  let stopping = false;
  const inFlight = new Map<Socket, number>();
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = Math.max(0, (inFlight.get(socket) ?? 1) - 1);
      inFlight.set(socket, left);
      if (stopping && left === 0) socket.destroySoon(); // after the response is flushed
    });
  });

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping: finishing in-flight requests');
    const code = await stopWithin(config.shutdownTimeoutMs, logger, [
      { name: 'background jobs', run: () => running.stop() },
      {
        name: "import of the original's data",
        run: () => {
          importing.abort();
          return imported;
        },
      },
      {
        name: 'in-flight requests',
        run: () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          for (const [socket, n] of inFlight) if (n === 0) socket.destroySoon();
          return closed;
        },
      },
      { name: 'close database and cache', run: () => ctx.close() },
    ]);
    logger.info({ exitCode: code }, code === 0 ? 'stopped' : 'stopped with errors');
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

class ListenError extends Error {}

function listen(config: Config, app: Parameters<typeof createHttpServer>[0]): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const s = createHttpServer(app, config);
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ListenError(`cannot listen on ${config.host}:${config.port}: ${err.code ?? err.message}`)),
    );
    s.listen(config.port, config.host, () => resolve(s));
  });
}

function describeStartError(err: unknown, databaseUrl: string | undefined): string {
  const e = err as NodeJS.ErrnoException & { code?: string };
  if (databaseUrl && ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EAI_AGAIN', '3D000', '28P01', '28000'].includes(e.code ?? '')) {
    const { urls } = splitDatabaseUrl(databaseUrl);
    const where = `${urls.map(hostOf).join(',')}${new URL(urls[0]).pathname}`;
    return `DATABASE_URL ${where} is unreachable (${e.code}: ${e.message.split('\n')[0]})`;
  }
  return (e.message ?? String(err)).split('\n')[0];
}

function exitWith(line: string): never {
  process.stderr.write(line + '\n');
  process.exit(1);
}

main().catch((err: unknown) => exitWith(`cannot start: ${describeStartError(err, undefined)}`));
