/**
 * The self-hosted stack's own log shipper: Vector's `http` sinks of Supabase's public
 * `docker/volumes/logs/vector.yml` post each source's events as a JSON array to
 * `/api/logs?source_name=<name>`, with the key in the URL (`&api_key=…`, as its earlier releases
 * do; later ones send it as `x-api-key`, tried here too). Each event below has exactly the shape
 * that file's remaps give it (`project_logs` for every container: `.project = "default"`,
 * `.event_message = del(.message)`, `.appname = del(.container_name)`, the docker fields deleted;
 * then one remap per service), with the test's own project in place of "default". Each must come
 * back from its `logs.all` CTE under that project. (The file has no sink for pgbouncer or
 * deno-subhosting-events.)
 */
import assert from 'node:assert/strict';
import { serveOwnApp, type Served } from './support.js';

/** Vector writes timestamps as RFC 3339 with nanoseconds. */
function vectorTime(ms: number, nanos = '123456789'): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, `.${nanos}Z`);
}

function vectorEvents(project: string, at: number) {
  const ts = vectorTime(at);
  const nginxTime = new Date(at).toISOString();
  // Kong's two sinks (access and error log) post to one source, read by edge_logs.
  const kong = <Fields extends { event_message: string }>(sink: string, fields: Fields) => ({
    sink: `logflare_kong (${sink})`,
    source: 'cloudflare.logs.prod',
    cte: 'edge_logs',
    event: { timestamp: ts, project, appname: 'supabase-kong', ...fields },
  });
  return [
    kong('kong_logs', {
      event_message: `172.18.0.1 - - [${nginxTime}] "GET /rest/v1/todos?select=* HTTP/1.1" 200 52 "http://localhost:3000/" "Mozilla/5.0"`,
      metadata: {
        request: {
          headers: { referer: 'http://localhost:3000/', user_agent: 'Mozilla/5.0', cf_connecting_ip: '172.18.0.1' },
          method: 'GET',
          path: '/rest/v1/todos?select=*',
          protocol: 'HTTP/1.1',
        },
        response: { status_code: 200 },
      },
    }),
    kong('kong_err', {
      severity: 'error',
      event_message: `${nginxTime} [error] 1234#0: *5 connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: kong, request: "GET /auth/v1/health HTTP/1.1", host: "localhost:8000"`,
      metadata: {
        request: {
          method: 'GET',
          host: 'localhost:8000',
          headers: { cf_connecting_ip: '172.18.0.1' },
          path: '/auth/v1/health',
          protocol: 'HTTP/1.1',
        },
        response: { status_code: 200 },
      },
    }),
    {
      sink: 'logflare_auth',
      source: 'gotrue.logs.prod',
      cte: 'auth_logs',
      event: (() => {
        const parsed = {
          component: 'api',
          duration: 81512,
          level: 'info',
          method: 'GET',
          msg: 'request completed',
          path: '/health',
          referer: 'http://localhost:3000',
          remote_addr: '172.18.0.8',
          request_id: 'b1f3c6a2-0d7e-4c43-9c55-1b2f9e0a7d11',
          status: 200,
          time: ts,
        };
        return {
          timestamp: ts,
          project,
          appname: 'supabase-auth',
          event_message: JSON.stringify(parsed),
          metadata: { timestamp: parsed.time, ...parsed },
        };
      })(),
    },
    {
      sink: 'logflare_rest',
      source: 'postgREST.logs.prod',
      cte: 'postgrest_logs',
      event: { timestamp: ts, project, appname: 'supabase-rest', event_message: 'Schema cache loaded', metadata: { host: project } },
    },
    {
      sink: 'logflare_realtime',
      source: 'realtime.logs.prod',
      cte: 'realtime_logs',
      event: {
        timestamp: ts,
        appname: 'realtime-dev.supabase-realtime',
        event_message: 'Billing metrics: [:realtime, :rate_counter, :channel, :events]',
        metadata: { project, external_id: project, level: 'info' },
      },
    },
    {
      sink: 'logflare_functions',
      source: 'deno-relay-logs',
      cte: 'function_edge_logs',
      event: {
        timestamp: ts,
        appname: 'supabase-edge-functions',
        event_message: 'serving the request with /home/deno/functions/hello',
        metadata: { project_ref: project },
      },
    },
    {
      sink: 'logflare_storage',
      source: 'storage.logs.prod.2',
      cte: 'storage_logs',
      event: {
        timestamp: ts,
        appname: 'supabase-storage',
        event_message: 'Server listening at http://0.0.0.0:5000',
        metadata: { project, tenantId: project, level: 30, timestamp: at, context: [{ host: '9f3b2c1d0e4a', pid: 1 }] },
      },
    },
    {
      sink: 'logflare_db',
      source: 'postgres.logs',
      cte: 'postgres_logs',
      event: {
        timestamp: ts,
        project,
        appname: 'supabase-db',
        event_message: `${nginxTime.replace('T', ' ').replace('Z', '')} UTC [182] LOG:  checkpoint starting: time`,
        metadata: { host: 'db-default', parsed: { timestamp: ts, error_severity: 'LOG' } },
      },
    },
  ];
}

describe("Vector, the self-hosted stack's shipper: its events, as its sinks post them", function () {
  this.timeout(60_000);
  let s: Served;
  const project = `vec${Date.now().toString(36)}`;
  const at = Date.now() - 5 * 60_000;
  before(async function () {
    // A database of its own, migrated, with its sources: over 60 s once in a CI run under a CPU
    // hog. Making it is not what these tests measure.
    this.timeout(300_000);
    s = await serveOwnApp(); // its fields (appname, severity, …) must not join the shared database's schemas
  });
  after(() => s?.close());

  const post = (source: string, events: object[], auth: 'url' | 'header') =>
    fetch(`${s.base}/api/logs?source_name=${source}${auth === 'url' ? `&api_key=${s.keys.ingest}` : ''}`, {
      method: 'POST',
      body: JSON.stringify(events), // Vector's json codec in an http sink: one JSON array per request
      headers: { 'content-type': 'application/json', ...(auth === 'header' ? { 'x-api-key': s.keys.ingest } : {}) },
    });
  const logsAll = async (cte: string, p: string) => {
    const res = await fetch(
      `${s.base}/api/endpoints/query/logs.all?project=${p}&sql=${encodeURIComponent(`select timestamp, event_message from ${cte}`)}`,
      { headers: { 'x-api-key': s.keys.query } },
    );
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { result: Array<{ timestamp: number; event_message: string }> }).result;
  };

  vectorEvents(project, at).forEach(({ sink, source, cte }, i) => {
    it(`when the ${sink} sink posts its event with api_key in the URL, then ${cte} returns it under its project (and not under another)`, async () => {
      // A project per sink (two sinks share edge_logs), and an event of another project beside
      // it, so that the project filter is what selects.
      const p = `${project}s${i}`;
      const mine = vectorEvents(p, at)[i].event;
      const theirs = vectorEvents(`${p}other`, at)[i].event;
      const res = await post(source, [mine, theirs], 'url');
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { message: 'Logged!', count: 2 });
      const rows = await logsAll(cte, p);
      assert.deepEqual(
        rows.map((r) => r.event_message),
        [mine.event_message],
      );
      assert.equal(rows[0].timestamp, Math.floor(at / 1000) * 1_000_000 + 123_456); // microseconds, from Vector's nanoseconds
    });
  });

  it('when a sink sends the key as x-api-key (the current vector.yml), then the events are stored too', async () => {
    const p = `${project}hdr`;
    const kong = vectorEvents(p, at)[0];
    const res = await post(kong.source, [kong.event], 'header');
    assert.equal(res.status, 200);
    assert.deepEqual(
      (await logsAll(kong.cte, p)).map((r) => r.event_message),
      [kong.event.event_message],
    );
  });
});
