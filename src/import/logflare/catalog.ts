/**
 * The original's sources, endpoints and access tokens, brought into the service through its own
 * services, with their checks (docs/MIGRATING.md, "What is imported"):
 *
 * - a source keeps its token as its id (ingest by `?source=<token>` goes on working) and its
 *   retention (`bigquery_table_ttl` days; none: RETENTION_DAYS). A source of that name that
 *   exists already (the stack's default sources, created at start) takes the token as its id.
 * - an endpoint keeps its token as its id, its query brought up to date with its
 *   `source_mapping` (a source renamed since the query was written is read by its new name), and
 *   is validated as `POST /api/endpoints` validates (422: reported with its reason). Endpoints
 *   that read other endpoints come after them. An endpoint whose name exists already is kept as
 *   it is here (reported).
 * - an access token (and a user's older `api_key`) is stored hashed, with its scopes; a scope
 *   naming a source or endpoint by the original's numeric id names the imported one's id.
 *
 * Whatever is not imported is in the report, with why: nothing is dropped silently. Running it
 * again changes nothing that was imported.
 */
import type { Knex } from 'knex';
import { AppError } from '../../errors.js';
import type { SourceService } from '../../sources/service.js';
import type { EndpointManagementService } from '../../endpoints/managementService.js';
import type { ApiKeyRepository } from '../../auth/keys.js';
import { fromOriginalScopes } from '../../auth/accessTokens.js';
import { MAX_RETENTION_DAYS } from '../../sources/body.js';
import { MAX_NAME_LENGTH, NAME_RE } from '../../inputLimits.js';
import { isUuid } from '../../ids.js';
import { SqlError } from '../../sql/errors.js';
import { queryTables, renameTables } from '../../sql/tables.js';
import type { OriginalCatalog, OriginalEndpoint, OriginalSource } from './original.js';

export interface Skipped {
  name: string;
  reason: string;
}

export interface CatalogReport {
  sources: { imported: string[]; adopted: string[]; existing: string[]; skipped: Skipped[] };
  endpoints: { imported: string[]; existing: string[]; skipped: Skipped[]; public: string[] };
  tokens: { imported: number; existing: number; revoked: number; skipped: Skipped[] };
}

/** A source of the original as it is here: the one its events go into. */
export interface ImportedSource {
  token: string;
  name: string;
}

export interface CatalogDeps {
  knex: Knex;
  sources: SourceService;
  endpoints: EndpointManagementService;
  keys: ApiKeyRepository;
  defaultRetentionDays: number;
}

export async function importCatalog(
  deps: CatalogDeps,
  catalog: OriginalCatalog,
): Promise<{ report: CatalogReport; sources: ImportedSource[] }> {
  const report: CatalogReport = {
    sources: { imported: [], adopted: [], existing: [], skipped: [] },
    endpoints: { imported: [], existing: [], skipped: [], public: [] },
    tokens: { imported: 0, existing: 0, revoked: catalog.revokedTokens, skipped: [] },
  };
  const sources: ImportedSource[] = [];
  for (const source of catalog.sources) {
    const imported = await importSource(deps, source, report);
    if (imported) sources.push(imported);
  }
  const sourceIds = new Map<number, string>(
    catalog.sources.filter((s) => sources.some((i) => i.token === s.token)).map((s) => [s.id, s.token]),
  );
  const namesByToken = new Map(sources.map((s) => [s.token, s.name]));
  const endpointIds = await importEndpoints(deps, catalog.endpoints, namesByToken, report);
  await importTokens(deps, catalog, { sourceIds, endpointIds }, report);
  return { report, sources };
}

async function importSource(deps: CatalogDeps, source: OriginalSource, report: CatalogReport): Promise<ImportedSource | undefined> {
  const { name, token } = source;
  if (!isUuid(token)) {
    report.sources.skipped.push({ name, reason: `its token "${token}" is not a UUID` });
    return undefined;
  }
  if (!NAME_RE.test(name) || name.length > MAX_NAME_LENGTH) {
    report.sources.skipped.push({
      name,
      reason: 'its name is not a valid source name here (letters, digits, "_", "." or "-"); rename it in the original first',
    });
    return undefined;
  }
  // bigquery_table_ttl is days; NULL is the plan's default, which the original does not apply to its Postgres tables.
  const retention =
    source.ttlDays !== null && source.ttlDays >= 1 ? Math.min(Math.round(source.ttlDays), MAX_RETENTION_DAYS) : deps.defaultRetentionDays;
  await deps.sources.reload();
  const byId = deps.sources.list().find((s) => s.id === token.toLowerCase());
  if (byId) {
    if (byId.name !== name) {
      report.sources.skipped.push({ name, reason: `its token is the id of source "${byId.name}" here` });
      return undefined;
    }
    report.sources.existing.push(name);
    return { token: byId.id, name };
  }
  const byName = deps.sources.list().find((s) => s.name === name);
  if (byName) {
    await adoptId(deps.knex, byName.id, token.toLowerCase());
    await deps.sources.reload();
    await deps.sources.update(token, { retention_days: retention });
    report.sources.adopted.push(name);
    return { token: token.toLowerCase(), name };
  }
  const created = await deps.sources.create({ id: token.toLowerCase(), name, retention_days: retention });
  report.sources.imported.push(name);
  return { token: created.id, name };
}

/**
 * A source of ours (one created at start, with the stack's name) takes the original's token as
 * its id: clients ingesting by that token reach it. Keys limited to it follow.
 */
async function adoptId(knex: Knex, from: string, to: string): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('sources').where({ id: from }).update({ id: to, updated_at: trx.fn.now() });
    await trx.raw(`UPDATE api_keys SET scopes = array_replace(scopes, ?, ?) WHERE ? = ANY (scopes)`, [
      `ingest:source:${from}`,
      `ingest:source:${to}`,
      `ingest:source:${from}`,
    ]);
    await trx('logflare_import_days').where({ source_id: from }).update({ source_id: to });
  });
}

/** Our endpoint id of each of the original's endpoints that is here (by its numeric id). */
async function importEndpoints(
  deps: CatalogDeps,
  endpoints: OriginalEndpoint[],
  namesByToken: ReadonlyMap<string, string>,
  report: CatalogReport,
): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  const here = await deps.endpoints.list();
  const pending = new Map<string, { endpoint: OriginalEndpoint; query: string; reads: string[] }>();
  for (const e of endpoints) {
    const mine = here.find((h) => h.id === e.token.toLowerCase()) ?? here.find((h) => h.name === e.name);
    if (mine) {
      ids.set(e.id, mine.id);
      if (mine.id === e.token.toLowerCase()) report.endpoints.existing.push(e.name);
      else
        report.endpoints.skipped.push({ name: e.name, reason: `an endpoint of that name exists here already (id ${mine.id}); it is kept` });
      continue;
    }
    if (!isUuid(e.token)) {
      report.endpoints.skipped.push({ name: e.name, reason: `its token "${e.token}" is not a UUID` });
      continue;
    }
    const query = withMappedSources(e, namesByToken);
    pending.set(e.name, { endpoint: e, query, reads: [] });
  }
  // Readers after what they read: an endpoint waits for the pending endpoints its query names.
  for (const p of pending.values()) p.reads = tablesOf(p.query).filter((t) => t !== p.endpoint.name && pending.has(t));
  const failed = new Map<string, string>();
  while (pending.size) {
    const ready = [...pending.values()].filter((p) => p.reads.every((r) => !pending.has(r)));
    // Nothing ready: a cycle. Each is tried as it is, and the same 422 as POST /api/endpoints names it.
    const batch = ready.length ? ready : [...pending.values()];
    for (const p of batch) {
      pending.delete(p.endpoint.name);
      const broken = p.reads.find((r) => failed.has(r));
      if (broken) {
        const reason = `it reads endpoint "${broken}", which could not be imported`;
        failed.set(p.endpoint.name, reason);
        report.endpoints.skipped.push({ name: p.endpoint.name, reason });
        continue;
      }
      try {
        const saved = await deps.endpoints.create(endpointBody(p.endpoint, p.query), p.endpoint.token.toLowerCase());
        ids.set(p.endpoint.id, saved.id);
        report.endpoints.imported.push(saved.name);
        if (!saved.enable_auth) report.endpoints.public.push(saved.name);
        if (p.endpoint.backendId !== null) {
          report.endpoints.skipped.push({
            name: p.endpoint.name,
            reason: `imported, but its backend (id ${p.endpoint.backendId}) is not: it runs on this service's Postgres`,
          });
        }
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const reason = [err.message, ...err.details.map((d) => (d.location ? `${d.location}: ${d.message}` : d.message))].join('; ');
        failed.set(p.endpoint.name, reason);
        report.endpoints.skipped.push({ name: p.endpoint.name, reason });
      }
    }
  }
  return ids;
}

/** The query with every table its `source_mapping` names read by the mapped source's name here. */
function withMappedSources(e: OriginalEndpoint, namesByToken: ReadonlyMap<string, string>): string {
  const renames = new Map<string, string>();
  for (const [written, token] of Object.entries(e.sourceMapping)) {
    const now = namesByToken.get(token.toLowerCase());
    if (now !== undefined && now !== written) renames.set(written, now);
  }
  if (!renames.size) return e.query;
  try {
    return renameTables(e.query, renames);
  } catch (err) {
    if (err instanceof SqlError) return e.query; // does not parse: the validation reports it
    throw err;
  }
}

function tablesOf(query: string): string[] {
  try {
    const t = queryTables(query);
    return t.tables.filter((name) => !t.ctes.includes(name.toLowerCase()));
  } catch (err) {
    if (err instanceof SqlError) return [];
    throw err;
  }
}

/** The original's row in the original's field names, which POST /api/endpoints accepts (docs/COMPATIBILITY.md). */
function endpointBody(e: OriginalEndpoint, query: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: e.name,
    query,
    description: e.description ?? '',
    // A row from before the column existed: the original runs it with authentication.
    enable_auth: e.enableAuth ?? true,
    language: e.language ?? 'bq_sql',
    labels: e.labels,
  };
  if (e.sandboxable !== null) body.sandboxable = e.sandboxable;
  if (e.redactPii !== null) body.redact_pii = e.redactPii;
  if (e.maxLimit !== null) body.max_limit = e.maxLimit;
  if (e.cacheDurationSeconds !== null) body.cache_duration_seconds = e.cacheDurationSeconds;
  if (e.proactiveRequeryingSeconds !== null) body.proactive_requerying_seconds = e.proactiveRequeryingSeconds;
  return body;
}

const RESOURCE_SCOPE = /^(ingest:source|ingest:collection|query:endpoint):(\d+)$/;

async function importTokens(
  deps: CatalogDeps,
  catalog: OriginalCatalog,
  ids: { sourceIds: ReadonlyMap<number, string>; endpointIds: ReadonlyMap<number, string> },
  report: CatalogReport,
): Promise<void> {
  const adopt = async (name: string, key: string, scopes: Parameters<ApiKeyRepository['adopt']>[2]) => {
    if (await deps.keys.adopt(name, key, scopes)) report.tokens.imported++;
    else report.tokens.existing++;
  };
  for (const t of catalog.tokens) {
    const name = t.description?.trim() || `logflare access token ${t.id}`;
    const label = `${name} (token ${t.id}, ${t.token.slice(0, 6)}…)`;
    // Never wider than the original's: a scope naming what was not imported keeps the token out.
    let missing: string | undefined;
    const words = t.scopes
      .split(/\s+/)
      .filter(Boolean)
      .map((word) => {
        const m = RESOURCE_SCOPE.exec(word);
        if (!m) return word;
        const id =
          m[1] === 'query:endpoint'
            ? ids.endpointIds.get(Number(m[2]))
            : m[1] === 'ingest:source'
              ? ids.sourceIds.get(Number(m[2]))
              : undefined;
        if (id === undefined) missing ??= word;
        return `${m[1]}:${id ?? ''}`;
      });
    if (missing !== undefined) {
      report.tokens.skipped.push({ name: label, reason: `its scope "${missing}" names something that is not imported` });
      continue;
    }
    try {
      await adopt(name, t.token, fromOriginalScopes(words.join(' ')));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      report.tokens.skipped.push({ name: label, reason: err.details[0]?.message ?? err.message });
    }
  }
  // The original's older single key of a user: it ingests and queries (its LOGFLARE_API_KEY).
  for (const key of new Set(catalog.userApiKeys)) await adopt('logflare user api_key', key, ['ingest', 'query']);
}
