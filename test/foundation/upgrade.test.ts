/**
 * Starting a newer release on an older install: seeded endpoints still at a query an earlier
 * release seeded are brought to the current one, and default sources gain the fields they now
 * start with; what an operator changed is kept.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { EndpointRepository } from '../../src/endpoints/repository.js';
import { ensureSeededEndpoints } from '../../src/seed.js';
import { defaultSourceSchema } from '../../src/ingest/defaultSchemas.js';
import { fieldMapCovers } from '../../src/sources/schema.js';
import { SEEDED_ENDPOINTS, SUPERSEDED_SEEDED_QUERIES } from '../../seeds/endpoints.js';
import request from 'supertest';
import { testContext } from '../support/db.js';
import { testApp } from '../support/http.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const usage = SEEDED_ENDPOINTS.find((e) => e.name === 'usage.api-counts')!;
/** The query the first release seeded: today's without the dashboard's three intervals. */
const firstUsageQuery = usage.query
  .split('\n')
  .filter((line) => !/@interval = '(1hr|1day|7day)'/.test(line))
  .join('\n');

describe('upgrading an install', () => {
  it('when a seeded endpoint still has a query an earlier release seeded, then start brings it to the current definition', async () => {
    assert.ok(SUPERSEDED_SEEDED_QUERIES['usage.api-counts']!.includes(sha256(firstUsageQuery)), "the first release's query is listed");
    const ctx = await testContext();
    const endpoints = new EndpointRepository(ctx.db.knex);
    const current = (await endpoints.find('usage.api-counts'))!;
    await endpoints.update(current.id, {
      query: firstUsageQuery,
      parameters: [{ ...usage.parameters[0]!, allowed_values: ['hourly', 'daily', 'minutely'] }, usage.parameters[1]!],
    });
    await ensureSeededEndpoints(ctx.db.knex, ctx.sources.lookup);
    const upgraded = (await endpoints.find('usage.api-counts'))!;
    assert.equal(upgraded.query, usage.query);
    assert.deepEqual(upgraded.parameters[0]!.allowed_values, ['hourly', 'daily', 'minutely', '1hr', '1day', '7day']);
    assert.ok(upgraded.version > current.version, 'a new version, so cached results are not served');
  });

  it('when a seeded endpoint is upgraded, then the endpoints that read it get a new version too (no stale cached result)', async () => {
    const { app, keys, context: ctx } = await testApp();
    const reader = await request(app)
      .post('/api/endpoints')
      .set('X-API-KEY', keys.admin)
      .send({ name: 'upgrade.reader', query: 'select count(*) as n from `usage.api-counts`' });
    assert.equal(reader.status, 201, reader.text);
    const endpoints = new EndpointRepository(ctx.db.knex);
    try {
      const current = (await endpoints.find('usage.api-counts'))!;
      await endpoints.update(current.id, { query: firstUsageQuery });
      const before = (await endpoints.find('upgrade.reader'))!.version;
      await ensureSeededEndpoints(ctx.db.knex, ctx.sources.lookup);
      assert.equal((await endpoints.find('usage.api-counts'))!.query, usage.query);
      assert.ok((await endpoints.find('upgrade.reader'))!.version > before);
    } finally {
      await request(app).delete('/api/endpoints/upgrade.reader').set('X-API-KEY', keys.admin);
    }
  });

  it('when an operator edited a seeded endpoint, then start leaves it alone', async () => {
    const ctx = await testContext();
    const endpoints = new EndpointRepository(ctx.db.knex);
    const current = (await endpoints.find('usage.api-counts'))!;
    const edited = `${firstUsageQuery}\n-- tuned by the operator`;
    await endpoints.update(current.id, { query: edited });
    try {
      await ensureSeededEndpoints(ctx.db.knex, ctx.sources.lookup);
      assert.equal((await endpoints.find('usage.api-counts'))!.query, edited);
    } finally {
      await endpoints.update(current.id, { query: usage.query, parameters: usage.parameters });
    }
  });

  it('when a default source has a schema from before its known fields, then start widens it and keeps what ingest had added', async () => {
    const ctx = await testContext();
    const source = await ctx.sources.get('pgbouncer.logs.prod');
    const ingested = { seen_only_here: { type: 'STRING', repeated: false } } as const;
    await ctx.db
      .knex('sources')
      .where({ id: source.id })
      .update({ schema: JSON.stringify(ingested), updated_at: ctx.db.knex.fn.now() });
    await ctx.sources.ensureDefaults(defaultSourceSchema);
    const widened = (await ctx.sources.get('pgbouncer.logs.prod')).schema;
    assert.ok(fieldMapCovers(widened, defaultSourceSchema('pgbouncer.logs.prod')));
    assert.ok(fieldMapCovers(widened, ingested));
  });
});
