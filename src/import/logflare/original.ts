/**
 * Reading an install of the original service (Logflare) as its own migrations and Postgres
 * adaptor lay it out (docs/MIGRATING.md; test/import/logflare-schema.sql is that layout):
 *
 * - `sources`: `id` (bigserial), `name`, `token` (uuid: the source's id in its API, and the name
 *   of its event table), `bigquery_table_ttl` (retention in days; NULL: the plan's default);
 * - `endpoint_queries`: `id`, `token` (uuid), `name`, `query`, `source_mapping` (jsonb: each
 *   table name of the query → the token of the source it meant, so a renamed source is followed),
 *   `language`, `sandboxable`, `cache_duration_seconds`, `proactive_requerying_seconds`,
 *   `max_limit`, `enable_auth`, `description`, `labels`, `redact_pii`, `backend_id`;
 * - `oauth_access_tokens`: `token` (stored as it is: the original compares the presented token
 *   with this column), `scopes` (space-separated), `description`, `revoked_at`;
 * - `users`: `api_key`, the older single key (ingest and query);
 * - one table per source, `log_events_<token with - as _>`: `id` text (primary key), `body`
 *   jsonb (the whole event), `event_message` text, `timestamp` timestamp (UTC, microseconds).
 *
 * Only reads, in READ ONLY transactions: nothing of the original is changed.
 */
import pg from 'pg';

export interface OriginalSource {
  id: number;
  name: string;
  token: string;
  /** Days; null: the original's default. */
  ttlDays: number | null;
}

export interface OriginalEndpoint {
  id: number;
  token: string;
  name: string;
  query: string;
  sourceMapping: Record<string, string>;
  language: string | null;
  sandboxable: boolean | null;
  cacheDurationSeconds: number | null;
  proactiveRequeryingSeconds: number | null;
  maxLimit: number | null;
  enableAuth: boolean | null;
  description: string | null;
  labels: string | null;
  redactPii: boolean | null;
  backendId: number | null;
}

export interface OriginalToken {
  id: number;
  token: string;
  scopes: string;
  description: string | null;
}

export interface OriginalCatalog {
  sources: OriginalSource[];
  endpoints: OriginalEndpoint[];
  /** Tokens not revoked. */
  tokens: OriginalToken[];
  /** How many tokens were revoked (not imported: they no longer open anything). */
  revokedTokens: number;
  /** The users' older API keys (`users.api_key`). */
  userApiKeys: string[];
}

/** A clear failure about the original's database (not ours): printed as it is by the CLI. */
export class OriginalError extends Error {}

/** `schema.name`, quoted. */
export function originalTable(schema: string, name: string): string {
  return `${quote(schema)}.${quote(name)}`;
}

/** The Postgres adaptor's event table of a source. */
export function eventTableName(token: string): string {
  return `log_events_${token.replace(/-/g, '_')}`;
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Opens a client on the original's database; its sessions are read only. */
export async function connectOriginal(url: string, what: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'logquery-import',
    options: '-c default_transaction_read_only=on',
  });
  client.on('error', () => undefined); // a lost connection fails the query in flight, which reports it
  try {
    await client.connect();
  } catch (err) {
    throw new OriginalError(`cannot connect to ${what} (${(err as Error).message.split('\n')[0]})`);
  }
  return client;
}

export async function readCatalog(client: pg.Client, schema: string): Promise<OriginalCatalog> {
  const missing = [];
  for (const table of ['sources', 'endpoint_queries', 'oauth_access_tokens', 'users']) {
    const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [originalTable(schema, table)]);
    if (!rows[0].found) missing.push(table);
  }
  if (missing.length)
    throw new OriginalError(
      `no table ${missing.map((t) => `${schema}.${t}`).join(', ')} in that database: is it the original's, and its schema "${schema}" (--schema)?`,
    );
  const sources = await client.query<{ id: string; name: string; token: string; ttl: number | null }>(
    `SELECT id, name, token::text AS token, bigquery_table_ttl AS ttl FROM ${originalTable(schema, 'sources')} ORDER BY id`,
  );
  const endpoints = await client.query<{
    id: string;
    token: string;
    name: string | null;
    query: string | null;
    source_mapping: unknown;
    language: string | null;
    sandboxable: boolean | null;
    cache_duration_seconds: number | null;
    proactive_requerying_seconds: number | null;
    max_limit: number | null;
    enable_auth: boolean | null;
    description: string | null;
    labels: string | null;
    redact_pii: boolean | null;
    backend_id: string | null;
  }>(
    `SELECT id, token::text AS token, name, query, source_mapping, language, sandboxable, cache_duration_seconds,
            proactive_requerying_seconds, max_limit, enable_auth, description, labels, redact_pii, backend_id
       FROM ${originalTable(schema, 'endpoint_queries')} ORDER BY id`,
  );
  const tokens = await client.query<{ id: string; token: string; scopes: string | null; description: string | null; revoked: boolean }>(
    `SELECT id, token, scopes, description, revoked_at IS NOT NULL AS revoked FROM ${originalTable(schema, 'oauth_access_tokens')} ORDER BY id`,
  );
  const users = await client.query<{ api_key: string | null }>(`SELECT api_key FROM ${originalTable(schema, 'users')} ORDER BY id`);
  return {
    sources: sources.rows.map((r) => ({ id: Number(r.id), name: r.name, token: r.token, ttlDays: r.ttl })),
    endpoints: endpoints.rows.map((r) => ({
      id: Number(r.id),
      token: r.token,
      name: r.name ?? '',
      query: r.query ?? '',
      sourceMapping: isStringMap(r.source_mapping) ? r.source_mapping : {},
      language: r.language,
      sandboxable: r.sandboxable,
      cacheDurationSeconds: r.cache_duration_seconds,
      proactiveRequeryingSeconds: r.proactive_requerying_seconds,
      maxLimit: r.max_limit,
      enableAuth: r.enable_auth,
      description: r.description,
      labels: r.labels,
      redactPii: r.redact_pii,
      backendId: r.backend_id === null ? null : Number(r.backend_id),
    })),
    tokens: tokens.rows
      .filter((t) => !t.revoked)
      .map((t) => ({ id: Number(t.id), token: t.token, scopes: t.scopes ?? '', description: t.description })),
    revokedTokens: tokens.rows.filter((t) => t.revoked).length,
    userApiKeys: users.rows.map((u) => u.api_key).filter((k): k is string => typeof k === 'string' && k.length > 0),
  };
}

function isStringMap(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
}

/** One day of a source's events, as the importer needs it. */
export interface EventDay {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  events: number;
}

/** The days a source's event table has events on, with their counts; undefined when the table does not exist. */
export async function eventDays(client: pg.Client, schema: string, token: string): Promise<EventDay[] | undefined> {
  const table = originalTable(schema, eventTableName(token));
  const { rows: found } = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [table]);
  if (!found[0].found) return undefined;
  const { rows } = await client.query<{ day: string; events: string }>(
    `SELECT to_char(date_trunc('day', "timestamp"), 'YYYY-MM-DD') AS day, count(*) AS events
       FROM ${table} GROUP BY 1 ORDER BY 1`,
  );
  return rows.map((r) => ({ day: r.day, events: Number(r.events) }));
}

/** An event row of the original, its timestamp as text to the microsecond (a Date keeps milliseconds). */
export interface OriginalEvent {
  id: string;
  body: unknown;
  event_message: string | null;
  ts: string;
}

/**
 * The events of one day, in (timestamp, id) order, after `after` when given, `batchSize` at a
 * time: one server-side cursor in one READ ONLY transaction (one sort of the day, then fetches),
 * closed when the iteration ends or is left.
 */
export async function* dayEvents(
  client: pg.Client,
  schema: string,
  token: string,
  day: string,
  after: { ts: string; id: string } | undefined,
  batchSize: number,
): AsyncGenerator<OriginalEvent[]> {
  const table = originalTable(schema, eventTableName(token));
  const params: unknown[] = [day];
  let resume = '';
  if (after) {
    params.push(after.ts, after.id);
    resume = `AND ("timestamp", id) > ($2::timestamp, $3::text)`;
  }
  await client.query('BEGIN READ ONLY');
  try {
    await client.query(
      `DECLARE logquery_import NO SCROLL CURSOR FOR
         SELECT id, body, event_message, "timestamp"::text AS ts FROM ${table}
          WHERE "timestamp" >= $1::date AND "timestamp" < $1::date + 1 ${resume}
          ORDER BY "timestamp", id`,
      params,
    );
    for (;;) {
      const { rows } = await client.query<OriginalEvent>(`FETCH ${batchSize} FROM logquery_import`);
      if (rows.length) yield rows;
      if (rows.length < batchSize) break;
    }
  } finally {
    await client.query('COMMIT').catch(() => undefined);
  }
}
