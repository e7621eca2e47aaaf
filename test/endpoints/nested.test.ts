/**
 * Endpoints that read other endpoints (``select … from `inner` ``), through HTTP on the real
 * Postgres: parameters shared by name, two levels, cycles and depth (422 at save and at run
 * time), no stale cached result after the inner endpoint changes, 409 on deleting or renaming
 * an endpoint that others read, and the sandbox: a caller's `sql` cannot name an endpoint.
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { insertEvents } from '../support/db.js';
import { testApp, type TestApp, withKey } from '../support/http.js';

describe('Endpoints reading endpoints', () => {
  const tag = `nest${Date.now().toString(36)}`;
  let t: TestApp;
  const admin = () => withKey(t.app, t.keys.admin);
  const query = (name: string, params: Record<string, string>) =>
    request(t.app).get(`/api/endpoints/query/${name}`).query(params).set('X-API-KEY', t.keys.query);
  const create = async (body: object) => (await admin().post('/api/endpoints', body).expect(201)).body;

  /** Events of this run in postgres.logs: project `tag`, messages a1…a3, b1, b2 (and one of another project). */
  before(async () => {
    t = await testApp();
    const now = Date.now();
    const events = ['a1', 'a2', 'a3', 'b1', 'b2'].map((m, i) => ({
      id: `${tag}-${i}`,
      timestamp: new Date(now - (i + 1) * 60_000).toISOString(),
      project: tag,
      event_message: m,
    }));
    events.push({ id: `${tag}-x`, timestamp: new Date(now - 30_000).toISOString(), project: `${tag}-other`, event_message: 'a9' });
    await insertEvents('postgres.logs', events);
  });

  const innerQuery = 'select timestamp as date, event_message, project from `postgres.logs` where project = @project';

  it('when an endpoint reads another by name, then its parameters include the inner ones and rows come through it', async () => {
    const inner = await create({
      name: `${tag}.inner`,
      query: innerQuery,
      parameters: [{ name: 'project', required: true, description: 'the project' }],
    });
    const outer = await create({
      name: `${tag}.outer`,
      query: `select event_message from \`${tag}.inner\` where event_message like @pattern order by event_message`,
    });
    assert.deepEqual(
      outer.parameters.map((p: { name: string }) => p.name),
      ['pattern', 'project'],
    );
    // The inner declaration is inherited: project is required through the outer endpoint too.
    assert.deepEqual(outer.parameters[1], { name: 'project', required: true, allowed_values: null, description: 'the project' });
    const res = await query(outer.name, { project: tag, pattern: 'a%' }).expect(200);
    assert.deepEqual(res.body.result, [{ event_message: 'a1' }, { event_message: 'a2' }, { event_message: 'a3' }]);
    const missing = await query(outer.name, { pattern: 'a%' }).expect(400);
    assert.equal(missing.body.error.errors[0].location, 'project');
    // A bare (unquoted) name works too when it is an identifier.
    const bare = await create({ name: `${tag}_bare`, query: 'select event_message from `postgres.logs` where project = @project' });
    const reader = await create({ name: `${tag}.bare-reader`, query: `select count(*) as n from ${bare.name}` });
    assert.deepEqual((await query(reader.name, { project: tag }).expect(200)).body.result, [{ n: 5 }]);
    assert.equal(inner.version, 1);
  });

  it('when the declared parameters omit an inner one, then 422 names it', async () => {
    const res = await admin()
      .post('/api/endpoints', {
        name: `${tag}.undeclared`,
        query: `select event_message from \`${tag}.inner\` where event_message like @pattern`,
        parameters: [{ name: 'pattern', required: false }],
      })
      .expect(422);
    assert.equal(res.body.error.errors[0].reason, 'undeclaredParameter');
    assert.equal(res.body.error.errors[0].location, 'parameters.project');
  });

  it('when GET /sql is asked, then the inner query is a subquery and its parameters are listed once', async () => {
    const res = await admin().get(`/api/endpoints/${tag}.outer/sql?project=${tag}&pattern=a%25`).expect(200);
    assert.match(res.body.sql, /FROM \(SELECT .*FROM "logs"\."postgres_logs"/s);
    // $1 is the inner @project: FROM is resolved before WHERE.
    assert.deepEqual(res.body.parameters, [
      { name: 'project', value: tag },
      { name: 'pattern', value: 'a%' },
    ]);
  });

  it('when endpoints are nested two levels, then the outermost reads through both', async () => {
    const top = await create({ name: `${tag}.top`, query: `select count(*) as n, min(event_message) as first from \`${tag}.outer\`` });
    assert.deepEqual(
      top.parameters.map((p: { name: string }) => p.name),
      ['pattern', 'project'],
    );
    assert.deepEqual((await query(top.name, { project: tag, pattern: 'b%' }).expect(200)).body.result, [{ n: 2, first: 'b1' }]);
  });

  it('when a name is a CTE, a source and an endpoint, then the CTE comes first, then the source', async () => {
    const shadowed = await create({ name: `${tag}_cte`, query: 'select 42 as x' });
    const reader = await create({
      name: `${tag}.cte-reader`,
      query: `with ${shadowed.name} as (select 1 as x) select x from ${shadowed.name}`,
    });
    assert.deepEqual((await query(reader.name, {}).expect(200)).body.result, [{ x: 1 }]);
    // An endpoint named like a source is never read as a table: the source is.
    await create({ name: 'postgres.logs', query: 'select 1 as x' });
    const viaSource = await create({
      name: `${tag}.source-first`,
      query: 'select count(*) as n from `postgres.logs` where project = @project',
    });
    assert.deepEqual((await query(viaSource.name, { project: tag }).expect(200)).body.result, [{ n: 5 }]);
    await admin().delete('/api/endpoints/postgres.logs').expect(204);
  });

  it('when an endpoint would read itself, directly or in a cycle, then 422 names the chain', async () => {
    const self = await admin()
      .post('/api/endpoints', { name: `${tag}.self`, query: `select * from \`${tag}.self\`` })
      .expect(422);
    assert.equal(self.body.error.errors[0].reason, 'nestingError');
    assert.match(self.body.error.message, new RegExp(`cycle: ${tag}\\.self → ${tag}\\.self`));
    await create({ name: `${tag}.cycle-a`, query: 'select event_message from `postgres.logs` where project = @project' });
    await create({ name: `${tag}.cycle-b`, query: `select event_message from \`${tag}.cycle-a\`` });
    const res = await admin()
      .patch(`/api/endpoints/${tag}.cycle-a`, { query: `select event_message from \`${tag}.cycle-b\`` })
      .expect(422);
    assert.match(res.body.error.message, new RegExp(`cycle: ${tag}\\.cycle-a → ${tag}\\.cycle-b → ${tag}\\.cycle-a`));
    assert.equal(res.body.error.errors[0].location, 'query:1:27');
    // Unchanged: still answers.
    assert.equal((await query(`${tag}.cycle-b`, { project: tag }).expect(200)).body.result.length, 5);
  });

  it('when a cycle is in the database anyway (two concurrent changes), then running it is 422 naming the chain', async () => {
    await create({ name: `${tag}.cycle-r`, query: `select event_message from \`${tag}.cycle-b\`` });
    await t.context.db
      .knex('endpoints')
      .where({ name: `${tag}.cycle-a` })
      .update({ query: `select event_message from \`${tag}.cycle-b\``, version: t.context.db.knex.raw('version + 1') });
    const res = await query(`${tag}.cycle-r`, { project: tag }).expect(422);
    assert.equal(res.body.error.errors[0].reason, 'nestingError');
    assert.match(res.body.error.message, new RegExp(`${tag}\\.cycle-r → ${tag}\\.cycle-b → ${tag}\\.cycle-a → ${tag}\\.cycle-b`));
  });

  it('when endpoints nest more than 5 levels, then 422 names the chain', async () => {
    await create({ name: `${tag}.d0`, query: 'select event_message from `postgres.logs` where project = @project' });
    for (let i = 1; i <= 5; i++) await create({ name: `${tag}.d${i}`, query: `select event_message from \`${tag}.d${i - 1}\`` });
    assert.equal((await query(`${tag}.d5`, { project: tag }).expect(200)).body.result.length, 5);
    const res = await admin()
      .post('/api/endpoints', { name: `${tag}.d6`, query: `select event_message from \`${tag}.d5\`` })
      .expect(422);
    assert.equal(res.body.error.errors[0].reason, 'nestingError');
    assert.match(res.body.error.message, /more than 5 levels deep/);
    assert.ok(res.body.error.message.includes([6, 5, 4, 3, 2, 1, 0].map((i) => `${tag}.d${i}`).join(' → ')), res.body.error.message);
  });

  it('when the inner endpoint changes, then the outer answers with the new rows, not a cached result', async () => {
    await create({
      name: `${tag}.c-inner`,
      query: "select event_message from `postgres.logs` where project = @project and event_message like 'a%'",
    });
    const outer = await create({
      name: `${tag}.c-outer`,
      query: `select count(*) as n from \`${tag}.c-inner\``,
      cache_duration_seconds: 300,
    });
    const first = await query(outer.name, { project: tag }).expect(200);
    assert.deepEqual(first.body.result, [{ n: 3 }]);
    assert.equal(first.headers['x-cache'], 'MISS');
    assert.equal((await query(outer.name, { project: tag }).expect(200)).headers['x-cache'], 'HIT');
    await admin()
      .patch(`/api/endpoints/${tag}.c-inner`, {
        query: "select event_message from `postgres.logs` where project = @project and event_message like 'b%'",
      })
      .expect(204);
    const after = await query(outer.name, { project: tag }).expect(200);
    assert.deepEqual(after.body.result, [{ n: 2 }]);
    assert.equal(after.headers['x-cache'], 'MISS');
    assert.equal((await admin().get(`/api/endpoints/${outer.name}`).expect(200)).body.version, 2, 'the reader got a new version');
  });

  it('when the inner endpoint gains a parameter, then its readers declare it too', async () => {
    await admin()
      .patch(`/api/endpoints/${tag}.c-inner`, {
        query: 'select event_message from `postgres.logs` where project = @project and event_message like @prefix',
      })
      .expect(204);
    const outer = (await admin().get(`/api/endpoints/${tag}.c-outer`).expect(200)).body;
    assert.deepEqual(
      outer.parameters.map((p: { name: string }) => p.name),
      ['project', 'prefix'],
    );
    assert.deepEqual((await query(outer.name, { project: tag, prefix: 'a2%' }).expect(200)).body.result, [{ n: 1 }]);
  });

  it('when a change of the inner endpoint would break a reader, then 422 names the reader and nothing changes', async () => {
    const res = await admin()
      .patch(`/api/endpoints/${tag}.inner`, { query: 'select project from `postgres.logs` where project = @project' })
      .expect(422);
    assert.equal(res.body.error.errors[0].reason, 'breaksReader');
    assert.equal(res.body.error.errors[0].location, `${tag}.outer`);
    assert.equal((await admin().get(`/api/endpoints/${tag}.inner`).expect(200)).body.version, 1);
  });

  it('when an endpoint that others read is deleted or renamed, then 409 lists them; once they are gone, it can be', async () => {
    const del = await admin().delete(`/api/endpoints/${tag}.c-inner`).expect(409);
    assert.deepEqual(
      del.body.error.errors.map((e: { location: string }) => e.location),
      [`${tag}.c-outer`],
    );
    assert.match(del.body.error.message, new RegExp(`"${tag}\\.c-outer"`));
    const rename = await admin()
      .patch(`/api/endpoints/${tag}.c-inner`, { name: `${tag}.c-renamed` })
      .expect(409);
    assert.equal(rename.body.error.errors[0].reason, 'readByEndpoint');
    await admin().delete(`/api/endpoints/${tag}.c-outer`).expect(204);
    await admin()
      .patch(`/api/endpoints/${tag}.c-inner`, { name: `${tag}.c-renamed` })
      .expect(204);
    await admin().delete(`/api/endpoints/${tag}.c-renamed`).expect(204);
  });

  it("when sandboxed sql names an endpoint, then 400; the endpoint's own CTEs may still read one", async () => {
    const outer = await create({
      name: `${tag}.sandboxed`,
      sandboxable: true,
      query: `with base as (select event_message from \`${tag}.inner\`) select event_message from base order by event_message`,
    });
    assert.equal((await query(outer.name, { project: tag }).expect(200)).body.result.length, 5);
    const counted = await query(outer.name, { project: tag, sql: "select count(*) as n from base where event_message like 'b%'" }).expect(
      200,
    );
    assert.deepEqual(counted.body.result, [{ n: 2 }]);
    for (const sql of [
      `select * from \`${tag}.inner\``,
      `select * from \`${tag}.d0\``,
      `select * from ${tag}_bare`,
      `with x as (select * from \`${tag}.inner\`) select * from x`,
    ]) {
      const res = await query(outer.name, { project: tag, sql }).expect(400);
      assert.equal(res.body.error.errors[0].reason, 'SqlSandboxError', sql);
    }
  });
});

describe('Renaming a source that endpoints name', () => {
  const tag = `nestsrc${Date.now().toString(36)}`;
  let t: TestApp;
  before(async () => {
    t = await testApp();
  });
  const admin = () => ({
    post: (path: string, body: object) => request(t.app).post(path).set('X-API-KEY', t.keys.admin).send(body),
    patch: (path: string, body: object) => request(t.app).patch(path).set('X-API-KEY', t.keys.admin).send(body),
    put: (path: string, body: object) => request(t.app).put(path).set('X-API-KEY', t.keys.admin).send(body),
    delete: (path: string) => request(t.app).delete(path).set('X-API-KEY', t.keys.admin),
  });

  it('when a source that an endpoint names is renamed, then 409 lists the endpoint; other changes and renames of unread sources work', async () => {
    const source = `${tag}.src`;
    await admin().post('/api/sources', { name: source }).expect(201);
    await admin()
      .post('/api/endpoints', { name: `${tag}.reader`, query: `select count(*) as n from \`${source}\`` })
      .expect(201);
    // A CTE of the same name is not a read of the source.
    await admin()
      .post('/api/endpoints', { name: `${tag}.cte`, query: 'with src as (select 1 as x) select x from src' })
      .expect(201);
    const res = await admin()
      .patch(`/api/sources/${source}`, { name: `${tag}.renamed` })
      .expect(409);
    assert.deepEqual(
      res.body.error.errors.map((e: { location: string; reason: string }) => [e.location, e.reason]),
      [[`${tag}.reader`, 'readByEndpoint']],
    );
    assert.match(res.body.error.message, new RegExp(`"${tag}\\.reader"`));
    await admin()
      .put(`/api/sources/${source}`, { name: `${tag}.renamed` })
      .expect(409);
    // Same name, other fields: fine.
    await admin().patch(`/api/sources/${source}`, { name: source, retention_days: 3 }).expect(200);
    const stillRuns = await request(t.app).get(`/api/endpoints/query/${tag}.reader`).set('X-API-KEY', t.keys.query).expect(200);
    assert.deepEqual(stillRuns.body.result, [{ n: 0 }]);
    // Once no endpoint names it, the rename goes through.
    await admin().delete(`/api/endpoints/${tag}.reader`).expect(204);
    const renamed = await admin()
      .patch(`/api/sources/${source}`, { name: `${tag}.renamed` })
      .expect(200);
    assert.equal(renamed.body.name, `${tag}.renamed`);
  });
});
