import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv } from 'ajv';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import request from 'supertest';
import type { paths } from '../../console/src/api/schema.js';
import { openApiTypes } from '../../console/scripts/openapi-types.js';
import { servedTestApp } from '../support/http.js';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: Array<{ name: string; required?: boolean; schema: { enum?: string[] } }> }>>;
  components: { schemas: Record<string, object> };
};

describe('OpenAPI: GET /api/openapi.json', () => {
  const t = servedTestApp();

  const documentWith = async (key?: string): Promise<Doc> => {
    const req = request(t.app).get('/api/openapi.json');
    if (key) req.set('X-API-KEY', key);
    return (await req.expect(200).expect('Content-Type', /application\/json/)).body as Doc;
  };

  it('when fetched without a key, then a valid OpenAPI 3.1 document of the whole API and no endpoint of this deployment', async () => {
    const doc = await documentWith();
    const result = await new Validator().validate(doc);
    assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors));
    assert.equal(result.valid, true);
    assert.equal(doc.openapi, '3.1.0');
    for (const path of [
      '/api/endpoints',
      '/api/endpoints/{idOrName}',
      '/api/endpoints/query/{idOrName}',
      '/api/sources/{idOrName}/partitions',
      '/api/sources/{idOrName}/events',
      '/api/keys',
      '/api/access-tokens',
      '/api/access-tokens/{token}',
      '/endpoints/query/{idOrName}',
      '/api/endpoints/query/name/{idOrName}',
      '/api/alerts',
      '/api/alerts/{idOrName}',
      '/api/alerts/{idOrName}/runs',
      '/api/alerts/{idOrName}/run',
      '/api/alerts/preview',
    ])
      assert.ok(doc.paths[path], path);
    // As the original service answers: PATCH of an endpoint is 204 without a body (docs/API.md, "Management API").
    const patchAnswers = (doc.paths['/api/endpoints/{idOrName}'].patch as unknown as { responses: Record<string, unknown> }).responses;
    assert.ok(patchAnswers['204'] && !patchAnswers['200']);
    const endpoint = doc.components.schemas.Endpoint as { properties: Record<string, object> };
    for (const field of ['token', 'max_limit', 'proactive_requerying_seconds', 'enable_auth', 'language', 'labels'])
      assert.ok(endpoint.properties[field], field);
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/api/endpoints/query/') && !p.includes('{')), 'no per-endpoint path');
    // PATCH /api/keys/{id} takes the limits of a key (docs/API.md, "Rate limits"), and a key shows them.
    assert.ok(doc.paths['/api/keys/{id}'].patch, 'PATCH /api/keys/{id}');
    const limits = doc.components.schemas.KeyLimitsBody as { properties: Record<string, object>; additionalProperties: boolean };
    assert.deepEqual(Object.keys(limits.properties).sort(), [
      'max_concurrent_queries',
      'query_ms_burst',
      'query_ms_per_second',
      'rate_limit_burst',
      'rate_limit_per_second',
    ]);
    assert.equal(limits.additionalProperties, false);
    assert.ok((doc.components.schemas.Key as { properties: Record<string, object> }).properties.query_ms_burst);
  });

  it('when fetched with a query key, then it still validates and has one path per endpoint, allowed_values as enum', async () => {
    const doc = await documentWith(t.keys.query);
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    const counts = doc.paths['/api/endpoints/query/usage.api-counts'];
    const interval = counts.get.parameters!.find((p) => p.name === 'interval')!;
    assert.equal(interval.required, true);
    assert.deepEqual(interval.schema.enum, ['hourly', 'daily', 'minutely', '1hr', '1day', '7day']);
    const logs = doc.paths['/api/endpoints/query/logs.all'].get.parameters!;
    assert.equal(logs.find((p) => p.name === 'iso_timestamp_start')?.required, false);
    assert.ok(
      logs.some((p) => p.name === 'sql'),
      'a sandboxable endpoint takes sql',
    );
  });

  it('when the key is unknown, then 401; when it cannot run endpoints, then 403', async () => {
    await request(t.app).get('/api/openapi.json').set('X-API-KEY', 'not-a-key-at-all-000000').expect(401);
    await request(t.app).get('/api/openapi.json').set('X-API-KEY', t.keys.ingest).expect(403);
  });

  it('when a body is checked against the published schema, then the service agrees (the document is the validator)', async () => {
    const doc = await documentWith();
    const ajv = new Ajv({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    const create = ajv.compile(doc.components.schemas.EndpointCreate);
    const bodies: object[] = [
      { name: 'doc.agrees', query: 'select 1 as one' },
      { name: 'doc agrees', query: 'select 1 as one' },
      { name: 'doc.agrees2', query: '   ' },
      { name: 'doc.agrees3', query: 'select 1 as one', max_rows: 0 },
      { name: 'doc.agrees4', query: 'select 1 as one', cache_warming_seconds: 0 },
      { name: 'doc.agrees5', query: 'select 1 as one', colour: 'blue' },
      { query: 'select 1 as one' },
      { name: 'doc.agrees6', query: 'select @a as a', parameters: [{ name: 'a', allowed_values: [] }] },
      // The original service's names (docs/COMPATIBILITY.md, "Management API").
      { name: 'doc.agrees7', query: 'select 1 as one', max_limit: 5, language: 'bq_sql', enable_auth: false, labels: 'a=b' },
      { name: 'doc.agrees8', query: 'select 1 as one', language: 'pg_sql' },
      { name: 'doc.agrees9', query: 'select 1 as one', proactive_requerying_seconds: -1 },
    ];
    for (const body of bodies) {
      const res = await request(t.app).post('/api/endpoints').set('X-API-KEY', t.keys.admin).send(body);
      assert.equal(res.status === 201, create(body), `${JSON.stringify(body)} → ${res.status}`);
      if (res.status !== 201) assert.equal(res.status, 422);
    }
    const limits = ajv.compile(doc.components.schemas.KeyLimitsBody);
    const key = await request(t.app)
      .post('/api/keys')
      .set('X-API-KEY', t.keys.admin)
      .send({ name: 'doc-limits', scopes: ['query'] })
      .expect(201);
    const limitBodies: object[] = [
      { query_ms_per_second: 500, query_ms_burst: null },
      { max_concurrent_queries: 0 },
      { query_ms_burst: -1 },
      { rate_limit_burst: 1.5 },
      { query_ms: 5 },
    ];
    for (const body of limitBodies) {
      const res = await request(t.app).patch(`/api/keys/${key.body.id}`).set('X-API-KEY', t.keys.admin).send(body);
      assert.equal(res.status === 200, limits(body), `${JSON.stringify(body)} → ${res.status}`);
      if (res.status !== 200) assert.equal(res.status, 422);
    }
  });

  it("when the console's types are generated (npm run openapi:types), then they have every path of the document", async () => {
    const types = await openApiTypes();
    for (const path of Object.keys((await documentWith()).paths)) assert.ok(types.includes(`\n    "${path}": {`), path);
  });

  it('when a client generated from the document calls an endpoint, then it runs it', async () => {
    // Types for this deployment's endpoints, generated from the document as a client's build would.
    const types = astToString(await openapiTS((await documentWith(t.keys.query)) as never));
    assert.match(types, /"\/api\/endpoints\/query\/usage\.api-counts"/);
    assert.match(types, /interval: "hourly" \| "daily" \| "minutely" \| "1hr" \| "1day" \| "7day"/);

    // The generic client (the console's own types) against the running service.
    const client = createClient<paths>({ baseUrl: t.base, headers: { 'X-API-KEY': t.keys.query } });
    const { data, error, response } = await client.GET('/api/endpoints/query/{idOrName}', {
      params: { path: { idOrName: 'usage.api-counts' }, query: { params: { interval: 'hourly', project: '.*' } } },
      querySerializer: { object: { style: 'form', explode: true } },
    });
    assert.equal(error, undefined, JSON.stringify(error));
    assert.equal(response.status, 200);
    assert.ok(Array.isArray(data.result));
    assert.match(response.headers.get('X-Cache') ?? '', /^(HIT|MISS)$/);

    // An error comes back typed as the envelope, with its location.
    const bad = await client.GET('/api/endpoints/query/{idOrName}', {
      params: { path: { idOrName: 'usage.api-counts' }, query: { params: { interval: 'weekly', project: '.*' } } },
      querySerializer: { object: { style: 'form', explode: true } },
    });
    assert.equal(bad.response.status, 400);
    assert.equal(bad.error!.error.errors[0].location, 'interval');
  });
});
