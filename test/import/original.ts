/**
 * A database laid out as an install of the original service (Logflare) lays it out
 * (logflare-schema.sql), filled as the Supabase stack fills it: its default user, the stack's
 * sources with their event tables (the Postgres adaptor's `log_events_<token>`), events made from
 * the stack's own samples (seeds/fixtures), endpoints and access tokens.
 *
 *   const original = await buildOriginal({ eventsPerSourceDay: 40 });
 *   original.url, original.sources, original.endpoints, original.tokens, original.totalEvents
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { PROJECT_ROOT } from '../../src/paths.js';
import { DEFAULT_SOURCES } from '../../src/sources/defaults.js';
import { createEmptyDatabase } from '../support/db.js';

export interface OriginalInstall {
  url: string;
  name: string;
  schema: string;
  sources: { id: number; name: string; token: string; ttl: number | null }[];
  endpoints: { id: number; name: string; token: string; query: string; language: string }[];
  tokens: { id: number; token: string; scopes: string; revoked: boolean }[];
  userApiKey: string;
  /** Every event of every source, by source name. */
  events: Map<string, { id: string; timestamp: string }[]>;
  totalEvents: number;
  /** The id of the one event the write path refuses (its metadata is a string). */
  refusedEventId: string;
}

const DAY_MS = 86_400_000;
/** A source of the user's own, besides the stack's. */
export const CUSTOM_SOURCE = 'app.checkout.logs';

/** Builds it in a new database of the shared Postgres (dropped with the test databases). */
export async function buildOriginal(options: { eventsPerSourceDay: number; days?: number; schema?: string }): Promise<OriginalInstall> {
  const schema = options.schema ?? '_analytics';
  const { url, name } = await createEmptyDatabase('lq_logflare');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const layout = await readFile(path.join(PROJECT_ROOT, 'test/import/logflare-schema.sql'), 'utf8');
    await client.query(schema === '_analytics' ? layout : layout.replaceAll('_analytics', schema));
    const q = (name: string) => `"${schema}"."${name}"`;
    const userApiKey = `lf_user_${randomUUID().replace(/-/g, '')}`;
    const {
      rows: [user],
    } = await client.query<{ id: string }>(
      `INSERT INTO ${q('users')} (email, provider, token, api_key, provider_uid, inserted_at, updated_at, endpoints_beta)
       VALUES ('default@logflare.app', 'default', $1, $2, 'default', now(), now(), true) RETURNING id`,
      [randomUUID(), userApiKey],
    );

    // The stack's sources, as the original's single-tenant Supabase mode creates them; one keeps 2 days.
    const sources: OriginalInstall['sources'] = [];
    for (const sourceName of [...DEFAULT_SOURCES.map((s) => s.name), CUSTOM_SOURCE]) {
      const token = randomUUID();
      const ttl = sourceName === 'postgres.logs' ? 2 : null;
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO ${q('sources')} (name, token, user_id, bigquery_table_ttl, public_token, inserted_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, now(), now()) RETURNING id`,
        [sourceName, token, user.id, ttl, randomUUID()],
      );
      sources.push({ id: Number(rows[0].id), name: sourceName, token, ttl });
      // The adaptor's table, as it makes it.
      const table = q(`log_events_${token.replace(/-/g, '_')}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, body JSONB, event_message TEXT, timestamp TIMESTAMP)`);
      await client.query(
        `CREATE INDEX IF NOT EXISTS "log_events_${token.replace(/-/g, '_')}_timestamp_brin_idx" ON ${table} USING brin (timestamp)`,
      );
    }

    // Events: each source's sample, varied, over `days` closed UTC days and the current one.
    const events = new Map<string, { id: string; timestamp: string }[]>();
    const days = options.days ?? 3;
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    let refusedEventId = '';
    for (const source of sources) {
      const sampleOf = source.name === CUSTOM_SOURCE ? 'cloudflare.logs.prod' : source.name;
      const sample = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'seeds/fixtures', `${sampleOf}.json`), 'utf8')) as Record<
        string,
        unknown
      >;
      const list: { id: string; timestamp: string }[] = [];
      const rows: unknown[][] = [];
      for (let d = days; d >= 0; d--) {
        const dayStart = today - d * DAY_MS;
        // Today's events stay in the past (the original has them already).
        const span = d === 0 ? Math.max(1, Math.min(DAY_MS, Date.now() - dayStart) - 60_000) : DAY_MS;
        for (let i = 0; i < options.eventsPerSourceDay; i++) {
          const micros = BigInt(dayStart + Math.floor(((i + 0.5) / options.eventsPerSourceDay) * span)) * 1000n + BigInt(i % 1000);
          const id = randomUUID();
          const message = `${typeof sample.event_message === 'string' ? sample.event_message : ''} #${d}.${i}`;
          const body: Record<string, unknown> = { ...structuredClone(sample), id, event_message: message, timestamp: Number(micros) };
          const response = (body.metadata as { response?: { status_code?: number } } | undefined)?.response;
          if (response) response.status_code = i % 7 === 0 ? 503 : 200;
          if (source.name === 'gotrue.logs.prod' && d === 1 && i === 0) {
            body.metadata = 'not a record'; // the original took it; this service's write path refuses it
            refusedEventId = id;
          }
          const ts = new Date(Number(micros / 1000n)).toISOString().replace('Z', '') + String(micros % 1000n).padStart(3, '0');
          rows.push([id, JSON.stringify(body), message, ts]);
          list.push({ id, timestamp: ts });
        }
      }
      const table = q(`log_events_${source.token.replace(/-/g, '_')}`);
      await client.query(
        `INSERT INTO ${table} (id, body, event_message, timestamp)
         SELECT * FROM unnest($1::text[], $2::jsonb[], $3::text[], $4::timestamp[])`,
        [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])],
      );
      events.set(source.name, list);
    }

    const token = (name: string) => sources.find((s) => s.name === name)!.token;
    // Endpoints as users write them: one reads a source by a name it had before a rename (its
    // source_mapping knows the token), one reads another endpoint (and has the lower id), one is
    // public, one is in another language, one does not translate, one is the stack's own name.
    const endpointRows: { name: string; query: string; mapping: Record<string, string>; language?: string; enableAuth?: boolean }[] = [
      {
        name: 'errors.per.day',
        query: 'select day, errors from `status.codes` where errors > 0 order by day',
        mapping: {},
      },
      {
        name: 'status.codes',
        query:
          'select timestamp_trunc(t.timestamp, day) as day, countif(r.status_code >= 500) as errors, count(*) as n\n' +
          'from `edge.logs.old` t cross join unnest(t.metadata) m cross join unnest(m.response) r group by day',
        mapping: { 'edge.logs.old': token('cloudflare.logs.prod') },
      },
      {
        name: 'auth.recent',
        query: 'select id, event_message, timestamp from `gotrue.logs.prod` order by timestamp desc limit 10',
        mapping: { 'gotrue.logs.prod': token('gotrue.logs.prod') },
        enableAuth: false,
      },
      { name: 'pg.native', query: 'select 1 as one', mapping: {}, language: 'pg_sql' },
      { name: 'broken.sql', query: 'select no_such_function(event_message) from `postgres.logs`', mapping: {} },
      { name: 'logs.all', query: 'select 1 as the_originals_own', mapping: {} },
    ];
    const endpoints: OriginalInstall['endpoints'] = [];
    for (const e of endpointRows) {
      const endpointToken = randomUUID();
      const language = e.language ?? 'bq_sql';
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO ${q('endpoint_queries')} (name, token, query, user_id, source_mapping, language, enable_auth, sandboxable,
                                              cache_duration_seconds, proactive_requerying_seconds, max_limit, description, labels, inserted_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, false, 60, 30, 500, $8, 'team=edge', now(), now()) RETURNING id`,
        [e.name, endpointToken, e.query, user.id, JSON.stringify(e.mapping), language, e.enableAuth ?? true, `${e.name} of the original`],
      );
      endpoints.push({ id: Number(rows[0].id), name: e.name, token: endpointToken, query: e.query, language });
    }

    // Access tokens as the original keeps them: the token itself, scopes as one string.
    const endpointId = (name: string) => endpoints.find((e) => e.name === name)!.id;
    const sourceId = (name: string) => sources.find((s) => s.name === name)!.id;
    const tokenRows: { scopes: string; description: string | null; revoked?: boolean }[] = [
      { scopes: 'private', description: 'LOGFLARE_PRIVATE_ACCESS_TOKEN' },
      { scopes: 'ingest query', description: 'LOGFLARE_PUBLIC_ACCESS_TOKEN' },
      { scopes: `query:endpoint:${endpointId('status.codes')}`, description: 'dashboard' },
      { scopes: `ingest:source:${sourceId('postgres.logs')}`, description: 'db shipper' },
      { scopes: '', description: null },
      { scopes: 'ingest', description: 'old shipper', revoked: true },
      { scopes: `query:endpoint:${endpointId('pg.native')}`, description: 'native reader' },
    ];
    const tokens: OriginalInstall['tokens'] = [];
    for (const t of tokenRows) {
      const value = randomUUID().replace(/-/g, '') + randomUUID().replace(/-/g, '').slice(0, 16);
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO ${q('oauth_access_tokens')} (resource_owner_id, token, scopes, description, revoked_at, inserted_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, now(), now()) RETURNING id`,
        [user.id, value, t.scopes, t.description, t.revoked ? new Date() : null],
      );
      tokens.push({ id: Number(rows[0].id), token: value, scopes: t.scopes, revoked: t.revoked ?? false });
    }

    const totalEvents = [...events.values()].reduce((n, l) => n + l.length, 0);
    return { url, name, schema, sources, endpoints, tokens, userApiKey, events, totalEvents, refusedEventId };
  } finally {
    await client.end();
  }
}

/** A dump of every table of a schema (names, columns, rows in a fixed order): to check it did not change. */
export async function schemaSnapshot(url: string, schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'i', 'S', 'v') ORDER BY 1`,
      [schema],
    );
    const parts: string[] = [JSON.stringify(tables)];
    for (const { name } of tables) {
      const { rows: columns } = await client.query(
        `SELECT column_name, data_type, column_default, is_nullable FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
        [schema, name],
      );
      parts.push(name, JSON.stringify(columns));
      if (columns.length) {
        const { rows } = await client.query(
          `SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest, count(*) AS n FROM "${schema}"."${name}" t`,
        );
        parts.push(JSON.stringify(rows[0]));
      }
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}
