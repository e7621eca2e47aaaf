import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../src/config.js';
import { PROJECT_ROOT } from '../../src/paths.js';

/** Runs `tsx src/main.ts` with `env` and returns its exit code and stderr. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

describe('start-up configuration', () => {
  it('when PORT is not a port number, then start fails with one line naming PORT', async () => {
    const { code, stderr } = await start({ PORT: 'eighty', DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres' });
    assert.equal(code, 1);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /^configuration error: PORT must be a whole number from 0 to 65535, got "eighty"/);
  });

  it('when DATABASE_URL points at nothing, then start fails with one line saying it is unreachable, without the password', async () => {
    const { code, stderr } = await start({ DATABASE_URL: 'postgresql://u:secret@127.0.0.1:1/nothing', PORT: '0' });
    assert.equal(code, 1);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /^cannot start: DATABASE_URL 127\.0\.0\.1:1\/nothing is unreachable/);
    assert.ok(!stderr.includes('secret'));
  });

  it('when a start-up step after the database is open fails, then start fails with one line and closes the embedded database', async function () {
    this.timeout(90_000);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lq-start-fails-'));
    try {
      // The first admin key cannot be written: a directory stands where its file goes.
      await mkdir(path.join(dataDir, 'admin-api-key'));
      const { code, stderr } = await start({ DATA_DIR: dataDir, LOAD_DEMO_DATA: 'false', PORT: '0' });
      assert.equal(code, 1);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, /^cannot start: EISDIR: .*admin-api-key/);
      assert.equal(existsSync(path.join(dataDir, 'logquery.lock')), false, 'the embedded database was stopped before the exit');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('when values are invalid, then loadConfig names the variable', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'mysql://x' }),
      (e: Error) => e instanceof ConfigError && /DATABASE_URL must start with postgres/.test(e.message),
    );
    assert.throws(() => loadConfig({ REDIS_URL: 'not a url' }), /REDIS_URL is not a valid URL/);
    assert.throws(() => loadConfig({ QUERY_TIMEOUT_MS: '-5' }), /QUERY_TIMEOUT_MS/);
    assert.throws(() => loadConfig({ ADMIN_API_KEY: 'short' }), /ADMIN_API_KEY must be at least 16 characters/);
    assert.equal(loadConfig({}).port, 4000);
    assert.equal(loadConfig({}).queryTimeoutMs, 15000);
    assert.equal(loadConfig({}).shutdownTimeoutMs, 10000);
    assert.throws(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '5s' }), /SHUTDOWN_TIMEOUT_MS must be a whole number/);
    const db = 'postgresql://postgres@127.0.0.1:5432/postgres';
    assert.throws(
      () => loadConfig({ DATABASE_URL: db, DATABASE_READ_URLS: `${db}, redis://r` }),
      /DATABASE_READ_URLS must start with postgres/,
    );
    assert.throws(() => loadConfig({ DATABASE_READ_URLS: db }), /DATABASE_READ_URLS needs DATABASE_URL/);
    assert.throws(() => loadConfig({ DATABASE_URL: db, MAX_REPLICA_LAG_MS: '1s' }), /MAX_REPLICA_LAG_MS must be a whole number/);
    assert.deepEqual(
      loadConfig({ DATABASE_URL: db, DATABASE_READ_URLS: ' postgresql://a:5433 ,postgresql://b:5433/x,' }).databaseReadUrls,
      ['postgresql://a:5433', 'postgresql://b:5433/x'],
    );
  });
});
