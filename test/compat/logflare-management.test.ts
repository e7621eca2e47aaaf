/**
 * The original service's management API, driven as its clients drive it (its field names, its
 * statuses, its token routes, its legacy query paths): docs/COMPATIBILITY.md, "Management API".
 * The shapes are those of its endpoint and access-token controllers and their OpenAPI schemas.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { loadConfig } from '../../src/config.js';
import { testApp, type TestApp } from '../support/http.js';

const tag = `lfm${Date.now().toString(36)}`;
const QUERY = 'select count(*) as n from `postgres.logs` where project = @project';

describe('the original service’s management API, with its field names and statuses', () => {
  let t: TestApp;
  /** As its clients send a private access token: `Authorization: Bearer`. */
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const asPrivate = () => bearer(t.keys.admin);

  before(async () => {
    t = await testApp();
    await request(t.app)
      .post('/api/logs?source_name=postgres.logs')
      .set(asPrivate())
      .send([
        { event_message: 'one', project: tag },
        { event_message: 'two', project: tag },
      ])
      .expect(200);
  });

  it('when an endpoint is created, read, patched, put and deleted in its words, then it answers as the original does', async () => {
    const created = await request(t.app)
      .post('/api/endpoints')
      .set(asPrivate())
      .send({
        name: `${tag}.counts`,
        query: QUERY,
        language: 'bq_sql',
        description: 'events of a project',
        sandboxable: false,
        cache_duration_seconds: 600,
        proactive_requerying_seconds: 300,
        max_limit: 50,
        enable_auth: true,
        redact_pii: false,
        enable_dynamic_reservation: false,
        labels: 'team=core,project=@project',
        backend_id: null,
      })
      .expect(201);
    const e = created.body;
    assert.equal(e.token, e.id, 'token is the id');
    assert.deepEqual(
      [e.name, e.language, e.max_limit, e.max_rows, e.proactive_requerying_seconds, e.cache_warming_seconds, e.enable_auth, e.labels],
      [`${tag}.counts`, 'bq_sql', 50, 50, 300, 300, true, 'team=core,project=@project'],
    );

    const shown = (await request(t.app).get(`/api/endpoints/${e.token}`).set(asPrivate()).expect(200)).body;
    assert.equal(shown.max_limit, 50);
    assert.equal(shown.labels, 'team=core,project=@project');
    assert.ok(
      (await request(t.app).get('/api/endpoints').set(asPrivate()).expect(200)).body.some((x: { token: string }) => x.token === e.token),
    );

    // PATCH: 204 and no body; PUT: 200 and the endpoint.
    const patched = await request(t.app)
      .patch(`/api/endpoints/${e.token}`)
      .set(asPrivate())
      .send({ max_limit: 7, proactive_requerying_seconds: 0, labels: null })
      .expect(204);
    assert.equal(patched.text, '');
    const after = (await request(t.app).get(`/api/endpoints/${e.token}`).set(asPrivate()).expect(200)).body;
    assert.deepEqual([after.max_limit, after.proactive_requerying_seconds, after.cache_warming_seconds, after.labels], [7, 0, null, null]);
    const put = await request(t.app)
      .put(`/api/endpoints/${e.token}`)
      .set(asPrivate())
      .send({ name: `${tag}.counts`, query: QUERY, max_limit: 9, enable_auth: true })
      .expect(200);
    assert.equal(put.body.max_limit, 9);
    assert.equal(put.body.token, e.token);

    const run = await request(t.app).get(`/api/endpoints/query/${e.token}?project=${tag}`).set(asPrivate()).expect(200);
    assert.deepEqual(run.body.result, [{ n: 2 }]);

    await request(t.app).delete(`/api/endpoints/${e.token}`).set(asPrivate()).expect(204);
    await request(t.app).get(`/api/endpoints/${e.token}`).set(asPrivate()).expect(404);
  });

  it('when its defaults come with caching off (1800 s of requerying), then it is saved without warming, not refused', async () => {
    const res = await request(t.app)
      .post('/api/endpoints')
      .set(asPrivate())
      .send({ name: `${tag}.defaults`, query: QUERY, cache_duration_seconds: 0, proactive_requerying_seconds: 1800 })
      .expect(201);
    assert.equal(res.body.cache_warming_seconds, null);
    assert.equal(res.body.enable_auth, true, 'auth is on unless turned off');
    await request(t.app).delete(`/api/endpoints/${res.body.id}`).set(asPrivate()).expect(204);
  });

  it('when a language other than bq_sql, or both names of one field with two values, are sent, then 422 names the field', async () => {
    for (const language of ['pg_sql', 'ch_sql', 'lql']) {
      const res = await request(t.app)
        .post('/api/endpoints')
        .set(asPrivate())
        .send({ name: `${tag}.lang`, query: QUERY, language })
        .expect(422);
      assert.equal(res.body.error.errors[0].location, 'language');
    }
    const both = await request(t.app)
      .post('/api/endpoints')
      .set(asPrivate())
      .send({ name: `${tag}.both`, query: QUERY, max_limit: 5, max_rows: 6 })
      .expect(422);
    assert.equal(both.body.error.errors[0].location, 'max_limit');
    const backend = await request(t.app)
      .post('/api/endpoints')
      .set(asPrivate())
      .send({ name: `${tag}.backend`, query: QUERY, backend_id: 3 })
      .expect(422);
    assert.equal(backend.body.error.errors[0].location, 'backend_id');
  });

  it('when called on its legacy paths, or with `sql` in a GET’s JSON body, then they run the endpoint', async () => {
    const e = (
      await request(t.app)
        .post('/api/endpoints')
        .set(asPrivate())
        .send({
          name: `${tag}.legacy`,
          query: 'with e as (select event_message, project from `postgres.logs`) select * from e',
          sandboxable: true,
        })
        .expect(201)
    ).body;
    for (const path of [`/endpoints/query/${e.token}`, `/endpoints/query/${e.name}`, `/api/endpoints/query/name/${e.name}`]) {
      const res = await request(t.app).get(path).set(asPrivate()).expect(200);
      assert.ok(res.body.result.length >= 2, path);
    }
    const sandboxed = await request(t.app)
      .get(`/api/endpoints/query/${e.token}`)
      .set(asPrivate())
      .send({ sql: `select count(*) as n from e where project = '${tag}'` })
      .expect(200);
    assert.deepEqual(sandboxed.body.result, [{ n: 2 }]);
    await request(t.app).delete(`/api/endpoints/${e.token}`).set(asPrivate()).expect(204);
  });

  it('when access tokens are created, listed, used and revoked by token, then as the original: the token once, then 401', async () => {
    const created = await request(t.app)
      .post('/api/access-tokens')
      .set(asPrivate())
      .send({ description: `${tag} shipper`, scopes: 'ingest query' })
      .expect(201);
    const token: string = created.body.token;
    assert.equal(typeof token, 'string');
    assert.equal(created.body.scopes, 'ingest query');
    assert.equal(created.body.description, `${tag} shipper`);
    assert.ok(!Number.isNaN(Date.parse(created.body.inserted_at)));

    const listed = (await request(t.app).get('/api/access-tokens').set(asPrivate()).expect(200)).body;
    const mine = listed.find((x: { id: string }) => x.id === created.body.id);
    assert.equal(mine.token, null, 'a token is never shown again');
    assert.equal(mine.scopes, 'ingest query');
    assert.ok(
      listed.some((x: { scopes: string }) => x.scopes.split(' ').includes('private')),
      'admin keys read as private',
    );

    await request(t.app)
      .post('/api/logs?source_name=postgres.logs')
      .set(bearer(token))
      .send({ event_message: 'three', project: `${tag}.t` })
      .expect(200);
    await request(t.app).get('/api/endpoints').set(bearer(token)).expect(403);

    const priv = await request(t.app).post('/api/access-tokens').set(asPrivate()).send({ scopes: 'private' }).expect(201);
    await request(t.app).get('/api/endpoints').set(bearer(priv.body.token)).expect(200);

    await request(t.app).delete(`/api/access-tokens/${token}`).set(asPrivate()).expect(204);
    await request(t.app).post('/api/logs?source_name=postgres.logs').set(bearer(token)).send({ event_message: 'four' }).expect(401);
    await request(t.app).delete(`/api/access-tokens/${token}`).set(asPrivate()).expect(404);
    await request(t.app).delete(`/api/access-tokens/${priv.body.id}`).set(asPrivate()).expect(204);

    for (const scopes of ['partner', 'write', 'query:endpoint:12']) {
      const res = await request(t.app).post('/api/access-tokens').set(asPrivate()).send({ scopes }).expect(422);
      assert.equal(res.body.error.errors[0].location, 'scopes', scopes);
    }
  });

  it('when LOGFLARE_API_KEY is set, then it is the public token (ingest and query), unless LOGFLARE_PUBLIC_ACCESS_TOKEN is set', () => {
    const key = 'legacy-api-key-0123456789';
    assert.deepEqual(loadConfig({ LOGFLARE_API_KEY: key }).bootstrapKeys, [{ name: 'logflare_api_key', key, scopes: ['ingest', 'query'] }]);
    const both = loadConfig({ LOGFLARE_API_KEY: key, LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public-token-0123456789' }).bootstrapKeys;
    assert.deepEqual(
      both.map((k) => k.name),
      ['logflare_public_access_token'],
    );
  });
});
