/**
 * `GET/POST /api/sources`, `GET/PUT/PATCH/DELETE /api/sources/:idOrName` (admin scope).
 * Creating a source creates its partitioned log table; deleting one drops it with its events.
 */
import { Router } from 'express';
import { jsonBody } from '../http/body.js';
import { pick } from '../http/present.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { SourceRecord } from './repository.js';
import type { SourceService } from './service.js';
import { checkSourceCreate, checkSourceUpdate, sourceBody } from './body.js';
import { DEFAULT_SEARCH_INDEX } from '../storage/searchIndexes.js';

export interface SourceRoutesDeps {
  auth: Pick<Authenticator, 'require'>;
  sources: Pick<
    SourceService,
    'reload' | 'list' | 'create' | 'get' | 'update' | 'delete' | 'setHotLeaves' | 'setSearchIndex' | 'partitions'
  >;
  /**
   * The ingest writer (src/ingest/write.ts), told when a source is deleted: its partitions are
   * gone, and a new source may reuse the table name. Structural, as ingest builds on sources.
   */
  writer: { forgetPartitions(): void };
  /** What a PUT without `retention_days` sets. */
  retentionDays: number;
}

export function sourceRoutes({ auth, sources, writer, retentionDays }: SourceRoutesDeps): Router {
  const router = Router();
  const admin = auth.require('admin');

  router.get('/api/sources', admin, async (_req, res) => {
    await sources.reload(); // another replica may have changed the list
    res.json(sources.list().map(present));
  });
  router.post('/api/sources', admin, jsonBody, async (req, res) => {
    const body = sourceBody(req.body, checkSourceCreate);
    res.status(201).json(present(await sources.create({ ...body, name: body.name! }))); // required by SourceCreateSchema
  });
  router.get('/api/sources/:idOrName', admin, async (req, res) => {
    res.json(present(await sources.get(String(req.params.idOrName))));
  });
  // Events per day partition and when retention drops each (docs/API.md, "Sources").
  router.get('/api/sources/:idOrName/partitions', admin, async (req, res) => {
    res.json(await sources.partitions(String(req.params.idOrName)));
  });
  router.put('/api/sources/:idOrName', admin, jsonBody, async (req, res) => {
    const body = sourceBody(req.body, checkSourceUpdate);
    // PUT is the whole resource: an omitted retention goes back to the default.
    const updated = await sources.update(String(req.params.idOrName), {
      name: body.name,
      retention_days: body.retention_days ?? retentionDays,
    });
    // An omitted hot_leaves keeps the current ones (they are storage, not a setting that has a default);
    // an omitted search_index goes back to the default, as the retention does.
    if (body.hot_leaves !== undefined) await sources.setHotLeaves(updated.id, body.hot_leaves);
    res.json(present(await sources.setSearchIndex(updated.id, body.search_index ?? DEFAULT_SEARCH_INDEX)));
  });
  router.patch('/api/sources/:idOrName', admin, jsonBody, async (req, res) => {
    const { name, retention_days, hot_leaves, search_index } = sourceBody(req.body, checkSourceUpdate);
    const updated = await sources.update(String(req.params.idOrName), { name, retention_days });
    if (hot_leaves !== undefined) await sources.setHotLeaves(updated.id, hot_leaves);
    res.json(present(search_index === undefined ? await sources.get(updated.id) : await sources.setSearchIndex(updated.id, search_index)));
  });
  router.delete('/api/sources/:idOrName', admin, async (req, res) => {
    await sources.delete(String(req.params.idOrName));
    writer.forgetPartitions();
    res.status(204).end();
  });
  return router;
}

/** A source as the API shows it. */
function present(s: SourceRecord) {
  return {
    ...pick(s, ['id', 'name', 'table_name', 'retention_days', 'schema']),
    hot_leaves: presentHotLeaves(s),
    search_index: s.search_index,
    ...pick(s, ['created_at', 'updated_at']),
  };
}

/** Each hot leaf with its backfill: `done`, or how many partitions still have rows to fill. */
function presentHotLeaves(s: SourceRecord) {
  return (s.hot_leaves ?? []).map((l) => ({
    path: l.path,
    type: l.type,
    index: l.index ?? 'project',
    backfill: l.pending_partitions.length ? { pending_partitions: l.pending_partitions.length } : 'done',
  }));
}
