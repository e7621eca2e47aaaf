import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { runCli } from '../../src/cli.js';
import { testDatabase } from '../support/db.js';
import { testApp } from '../support/http.js';

const exec = promisify(execFile);

describe('CLI (npm run cli)', () => {
  let env: Record<string, string>;
  before(async () => {
    const { url } = await testDatabase();
    env = { DATABASE_URL: url, LOAD_DEMO_DATA: 'false', LOG_LEVEL: 'silent' };
  });

  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const lines: string[] = [];
    const errors: string[] = [];
    const code = await runCli(argv, { env, out: (text) => lines.push(text), err: (text) => errors.push(text) });
    return { code, out: lines.join('\n'), err: errors.join('\n') };
  }

  it('when a key is created, listed and deleted, then it works over HTTP until it is deleted', async () => {
    const created = await cli('keys', 'create', '--name', 'cli-key', '--scope', 'ingest', '--scope', 'query');
    assert.equal(created.code, 0);
    const key = JSON.parse(created.out);
    assert.deepEqual(key.scopes, ['ingest', 'query']);
    assert.match(key.key, /^lq_/);

    const { app } = await testApp();
    await request(app)
      .post('/api/logs?source_name=postgres.logs')
      .set('X-API-KEY', key.key)
      .send({ event_message: 'from cli key', project: 'mgmt-cli' })
      .expect(200);

    const listed = JSON.parse((await cli('keys', 'list')).out);
    const row = listed.find((k: { id: string }) => k.id === key.id);
    assert.equal(row.name, 'cli-key');
    assert.equal(row.key, undefined);

    assert.equal((await cli('keys', 'delete', key.id)).code, 0);
    assert.ok(!JSON.parse((await cli('keys', 'list')).out).some((k: { id: string }) => k.id === key.id));
    assert.equal((await cli('keys', 'delete', key.id)).code, 1);
  });

  it('when sources are created and listed, and endpoints listed, then the output is JSON', async () => {
    const created = await cli('sources', 'create', 'cli.source', '--retention-days', '3');
    assert.equal(created.code, 0);
    assert.equal(JSON.parse(created.out).retention_days, 3);
    const sources = JSON.parse((await cli('sources', 'list')).out);
    assert.ok(sources.some((s: { name: string }) => s.name === 'cli.source'));
    assert.ok(sources.some((s: { name: string }) => s.name === 'cloudflare.logs.prod'));
    assert.equal((await cli('sources', 'create', 'cli.source')).code, 1, 'duplicate name fails');
    const endpoints = await cli('endpoints', 'list');
    assert.equal(endpoints.code, 0);
    assert.ok(Array.isArray(JSON.parse(endpoints.out)));
  });

  it('when the command or its options are wrong, then exit code 2 and nothing runs', async () => {
    const unknown = await cli('keys', 'frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command "keys frobnicate"[\s\S]*Usage/);
    assert.equal((await cli('keys', 'create', '--name', 'x')).code, 2);
    assert.equal((await cli('keys', 'create', '--name', 'x', '--scope', 'root')).code, 2);
    assert.equal((await cli()).code, 2);
  });

  it('when there is no DATABASE_URL and another process holds the embedded database, then it refuses to open it', async function () {
    // A process of its own (tsx compiling the CLI, under c8 in CI): 20 s was too short once at load
    // average 10 (a run of .ci/run beside a CPU hog). The limit only guards against a hang.
    this.timeout(120_000);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'logquery-cli-'));
    try {
      await writeFile(path.join(dataDir, 'logquery.lock'), String(process.pid)); // this test process is alive: it "holds" the directory
      const childEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
      delete childEnv.DATABASE_URL;
      const result = await exec(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', 'list'], { env: childEnv }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
      assert.equal(result.code, 1);
      assert.match(result.stderr, new RegExp(`in use by process ${process.pid}`));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
