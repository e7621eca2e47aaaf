import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import request from 'supertest';
import { testApp, type TestApp, withKey } from '../support/http.js';
import { listenLocally } from '../support/net.js';

const QUERY = 'select count(*) as n from `cloudflare.logs.prod` where project = @project and event_message like @pattern';

describe('Management: /api/endpoints', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const as = (key: string) => withKey(t.app, key);
  const admin = () => as(t.keys.admin);

  it('when an endpoint is created with only name and query, then 201 with the defaults and every @name declared, not required', async () => {
    const res = await admin().post('/api/endpoints', { name: 'mgmt.defaults', query: QUERY }).expect(201);
    const e = res.body;
    assert.match(e.id, /^[0-9a-f-]{36}$/);
    assert.equal(e.name, 'mgmt.defaults');
    assert.equal(e.query, QUERY);
    assert.deepEqual(e.parameters, [
      { name: 'project', required: false, allowed_values: null, description: '' },
      { name: 'pattern', required: false, allowed_values: null, description: '' },
    ]);
    assert.equal(e.max_rows, 1000);
    assert.equal(e.cache_duration_seconds, 0);
    assert.equal(e.cache_warming_seconds, null);
    assert.equal(e.sandboxable, false);
    assert.equal(e.redact_pii, false);
    assert.equal(e.version, 1);
  });

  it('when an endpoint is created with every field, then they are kept', async () => {
    const body = {
      name: 'mgmt.full',
      description: 'all fields',
      query: QUERY,
      parameters: [
        { name: 'project', required: true, allowed_values: null, description: 'the project' },
        { name: 'pattern', required: false, allowed_values: ['%GET%', '%POST%'], description: '' },
      ],
      max_rows: 50,
      cache_duration_seconds: 60,
      cache_warming_seconds: 30,
      sandboxable: true,
      redact_pii: true,
    };
    const res = await admin().post('/api/endpoints', body).expect(201);
    for (const [k, v] of Object.entries(body)) assert.deepEqual(res.body[k], v, k);
  });

  it('when the name is taken, then 409', async () => {
    await admin().post('/api/endpoints', { name: 'mgmt.dup', query: QUERY }).expect(201);
    const res = await admin().post('/api/endpoints', { name: 'mgmt.dup', query: QUERY }).expect(409);
    assert.equal(res.body.error.status, 'ALREADY_EXISTS');
  });

  it('when listed, then the answer is a bare array; when fetched by id or name, then the object', async () => {
    const created = (await admin().post('/api/endpoints', { name: 'mgmt.get', query: QUERY }).expect(201)).body;
    const list = (await admin().get('/api/endpoints').expect(200)).body;
    assert.ok(Array.isArray(list));
    assert.ok(list.some((e: { name: string }) => e.name === 'mgmt.get'));
    assert.ok(
      list.some((e: { name: string }) => e.name === 'logs.all'),
      'the seeded endpoints are listed',
    );
    assert.equal((await admin().get(`/api/endpoints/${created.id}`).expect(200)).body.name, 'mgmt.get');
    assert.equal((await admin().get('/api/endpoints/mgmt.get').expect(200)).body.id, created.id);
  });

  it('when an endpoint is unknown, then GET, PUT, PATCH and DELETE answer 404', async () => {
    for (const path of ['/api/endpoints/no.such', '/api/endpoints/00000000-0000-4000-8000-000000000000']) {
      assert.equal((await admin().get(path).expect(404)).body.error.status, 'NOT_FOUND');
      await admin().put(path, { name: 'x', query: QUERY }).expect(404);
      await admin().patch(path, { max_rows: 5 }).expect(404);
      await admin().delete(path).expect(404);
    }
  });

  it('when the SQL does not parse, then 422 with the line and column in errors[0].location', async () => {
    const query = 'select id,\n  event_message\nfrom `cloudflare.logs.prod`\nwhere project = ';
    const res = await admin().post('/api/endpoints', { name: 'mgmt.bad-sql', query }).expect(422);
    assert.equal(res.body.error.code, 422);
    assert.equal(res.body.error.errors[0].location, 'query:4:17');
    assert.equal(res.body.error.errors[0].reason, 'syntaxError');
    assert.match(res.body.error.message, /unexpected end of query \(line 4, column 17\)/);
    await admin().get('/api/endpoints/mgmt.bad-sql').expect(404);
  });

  it('when the SQL names an unknown function or table, then 422 points at it', async () => {
    const fn = await admin()
      .post('/api/endpoints', { name: 'mgmt.bad-fn', query: 'select id\nfrom `cloudflare.logs.prod`\nwhere nosuchfn(project) = 1' })
      .expect(422);
    assert.equal(fn.body.error.errors[0].location, 'query:3:7');
    assert.match(fn.body.error.message, /unknown function nosuchfn/);
    const table = await admin().post('/api/endpoints', { name: 'mgmt.bad-table', query: 'select id from `no.such.source`' }).expect(422);
    assert.equal(table.body.error.errors[0].location, 'query:1:16');
  });

  it('when the SQL reads fields no event has brought yet, then it is saved with warnings, runs and reads NULL', async () => {
    const query =
      'select t.not_seen_yet, r.no_such_leaf from `cloudflare.logs.prod` t cross join unnest(t.metadata) m cross join unnest(m.request) r where t.project = @project limit 1';
    const created = await admin().post('/api/endpoints', { name: 'mgmt.unknown-fields', query }).expect(201);
    assert.deepEqual(
      created.body.warnings.map((w: { location: string }) => w.location),
      ['query:1:8', 'query:1:24'],
    );
    assert.match(created.body.warnings[1].message, /unknown field no_such_leaf reads as NULL until events bring it/);
    const plan = await admin().get('/api/endpoints/mgmt.unknown-fields/sql?project=x').expect(200);
    assert.deepEqual(plan.body.warnings, created.body.warnings);
    const replaced = await admin()
      .put('/api/endpoints/mgmt.unknown-fields', { name: 'mgmt.unknown-fields', query: query.replace('r.no_such_leaf', 'r.path') })
      .expect(200);
    assert.equal(replaced.body.warnings.length, 1);
    await admin().get('/api/endpoints/query/mgmt.unknown-fields?project=default').expect(200);
  });

  it('when declared and used parameters differ, then 422 names the parameter', async () => {
    const undeclared = await admin()
      .post('/api/endpoints', { name: 'mgmt.p1', query: QUERY, parameters: [{ name: 'project' }] })
      .expect(422);
    assert.equal(undeclared.body.error.errors[0].location, 'parameters.pattern');
    assert.match(undeclared.body.error.message, /@pattern/);
    const unused = await admin()
      .post('/api/endpoints', {
        name: 'mgmt.p2',
        query: QUERY,
        parameters: [{ name: 'project' }, { name: 'pattern' }, { name: 'extra' }],
      })
      .expect(422);
    assert.equal(unused.body.error.errors[0].location, 'parameters.extra');
    const reserved = await admin()
      .post('/api/endpoints', { name: 'mgmt.p3', query: 'select id from `cloudflare.logs.prod` where id = @sql' })
      .expect(422);
    assert.match(reserved.body.error.message, /reserved/);
  });

  it('when a field is out of range or of the wrong type, then 422 names it', async () => {
    const cases: Array<[object, string]> = [
      [{ name: 'bad name!' }, 'name'],
      [{ name: '' }, 'name'],
      [{ max_rows: 0 }, 'max_rows'],
      [{ max_rows: 1_000_001 }, 'max_rows'],
      [{ max_rows: 1.5 }, 'max_rows'],
      [{ cache_duration_seconds: -1 }, 'cache_duration_seconds'],
      [{ cache_warming_seconds: 0, cache_duration_seconds: 60 }, 'cache_warming_seconds'],
      [{ cache_warming_seconds: 30 }, 'cache_warming_seconds'], // warming without caching
      [{ sandboxable: 'yes' }, 'sandboxable'],
      [{ redact_pii: 1 }, 'redact_pii'],
      [{ query: '' }, 'query'],
      [{ query: 42 }, 'query'],
      [{ parameters: 'project' }, 'parameters'],
      [{ parameters: [{ name: 'project', required: 'no' }, { name: 'pattern' }] }, 'parameters[0].required'],
      [{ parameters: [{ name: 'project', allowed_values: [1] }, { name: 'pattern' }] }, 'parameters[0].allowed_values'],
      [{ colour: 'red' }, 'colour'],
    ];
    for (const [patch, location] of cases) {
      const res = await admin()
        .post('/api/endpoints', { name: 'mgmt.range', query: QUERY, ...patch })
        .expect(422);
      assert.equal(res.body.error.errors[0].location, location, JSON.stringify(patch));
      assert.ok(res.body.error.message.length > 10);
    }
    await admin().get('/api/endpoints/mgmt.range').expect(404);
  });

  it('when PUT replaces an endpoint, then 200 with the new definition, defaults for omitted fields, and a new version', async () => {
    const created = (await admin().post('/api/endpoints', { name: 'mgmt.put', query: QUERY, max_rows: 10, sandboxable: true }).expect(201))
      .body;
    const res = await admin()
      .put('/api/endpoints/mgmt.put', { name: 'mgmt.put2', query: 'select id from `postgres.logs` where project = @project' })
      .expect(200);
    assert.equal(res.body.id, created.id);
    assert.equal(res.body.name, 'mgmt.put2');
    assert.equal(res.body.max_rows, 1000);
    assert.equal(res.body.sandboxable, false);
    assert.deepEqual(
      res.body.parameters.map((p: { name: string }) => p.name),
      ['project'],
    );
    assert.equal(res.body.version, created.version + 1);
    await admin().get('/api/endpoints/mgmt.put').expect(404);
  });

  it('when PATCH changes some fields, then the others are kept, the version goes up, and a bad patch is 422 and changes nothing', async () => {
    const created = (
      await admin()
        .post('/api/endpoints', {
          name: 'mgmt.patch',
          query: QUERY,
          parameters: [{ name: 'project', required: true, description: 'p' }, { name: 'pattern' }],
          max_rows: 10,
        })
        .expect(201)
    ).body;
    // As the original service answers it: 204 without a body (docs/API.md, "Management API").
    const patch = await admin().patch(`/api/endpoints/${created.id}`, { max_rows: 20 }).expect(204);
    assert.equal(patch.text, '');
    const first = (await admin().get(`/api/endpoints/${created.id}`).expect(200)).body;
    assert.equal(first.max_rows, 20);
    assert.equal(first.query, QUERY);
    assert.equal(first.version, 2);
    // A new query without parameters keeps the declarations of names still used and declares the new ones.
    await admin()
      .patch('/api/endpoints/mgmt.patch', { query: 'select id from `cloudflare.logs.prod` where project = @project and id = @id' })
      .expect(204);
    const second = (await admin().get('/api/endpoints/mgmt.patch').expect(200)).body;
    assert.deepEqual(second.parameters, [
      { name: 'project', required: true, allowed_values: null, description: 'p' },
      { name: 'id', required: false, allowed_values: null, description: '' },
    ]);
    assert.equal(second.version, 3);
    const bad = await admin()
      .patch('/api/endpoints/mgmt.patch', { query: 'select id from\n  `cloudflare.logs.prod` where nosuchfn(1)' })
      .expect(422);
    assert.equal(bad.body.error.errors[0].location, 'query:2:32');
    const after = (await admin().get('/api/endpoints/mgmt.patch').expect(200)).body;
    assert.equal(after.version, 3);
    assert.equal(after.max_rows, 20);
  });

  it('when renamed to a name that is taken, then 409', async () => {
    await admin().post('/api/endpoints', { name: 'mgmt.rename-a', query: QUERY }).expect(201);
    await admin().post('/api/endpoints', { name: 'mgmt.rename-b', query: QUERY }).expect(201);
    await admin().patch('/api/endpoints/mgmt.rename-b', { name: 'mgmt.rename-a' }).expect(409);
  });

  it('when deleted, then 204 and afterwards 404', async () => {
    await admin().post('/api/endpoints', { name: 'mgmt.delete', query: QUERY }).expect(201);
    const res = await admin().delete('/api/endpoints/mgmt.delete').expect(204);
    assert.equal(res.text, '');
    await admin().get('/api/endpoints/mgmt.delete').expect(404);
    await admin().delete('/api/endpoints/mgmt.delete').expect(404);
  });

  it('when the key is not admin, then 403; when there is no key, then 401', async () => {
    await as(t.keys.query).get('/api/endpoints').expect(403);
    await as(t.keys.ingest).post('/api/endpoints', { name: 'mgmt.scope', query: QUERY }).expect(403);
    await request(t.app).get('/api/endpoints').expect(401);
    await request(t.app).delete('/api/endpoints/logs.all').expect(401);
  });

  it('when the body is not JSON, not an object, of another type or over 1 MB, then 400, 400, 415 and 413', async () => {
    await request(t.app)
      .post('/api/endpoints')
      .set('X-API-KEY', t.keys.admin)
      .set('Content-Type', 'application/json')
      .send('{"name": ')
      .expect(400);
    await admin().post('/api/endpoints', ['not', 'an', 'object']).expect(400);
    await request(t.app).post('/api/endpoints').set('X-API-KEY', t.keys.admin).set('Content-Type', 'text/plain').send('name=x').expect(415);
    const huge = await admin()
      .post('/api/endpoints', { name: 'mgmt.huge', query: QUERY, description: 'x'.repeat(1_100_000) })
      .expect(413);
    assert.equal(huge.body.error.status, 'PAYLOAD_TOO_LARGE');
    await request(t.app).post('/api/endpoints').set('X-API-KEY', t.keys.admin).expect(400); // no body
  });

  it('when a gzip body inflates past 1 MB, then 413 and nothing is created', async () => {
    const server = http.createServer(t.app);
    const { base } = await listenLocally(server);
    try {
      const body = zlib.gzipSync(JSON.stringify({ name: 'mgmt.bomb', query: QUERY, description: ' '.repeat(8 * 1024 * 1024) }));
      const res = await fetch(`${base}/api/endpoints`, {
        method: 'POST',
        headers: { 'X-API-KEY': t.keys.admin, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: new Uint8Array(body),
      });
      assert.equal(res.status, 413);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, 413);
      await admin().get('/api/endpoints/mgmt.bomb').expect(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
