/**
 * The environment Supabase's self-hosted stack gives the original's analytics container, read
 * by loadConfig (docs/MIGRATING.md): the database from DB_*, the service's tables in a schema of
 * their own, where the original's data is. The service started with exactly that environment is
 * test/hardening/supabase-stack.test.ts.
 */
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startupOptions, withSearchPath } from '../../src/db/databaseUrl.js';

/** docker/docker-compose.yml of supabase/supabase, service `analytics`, with values filled in. */
const STACK = {
  LOGFLARE_NODE_HOST: '127.0.0.1',
  DB_USERNAME: 'supabase_admin',
  DB_DATABASE: '_supabase',
  DB_HOSTNAME: 'db',
  DB_PORT: '5432',
  DB_PASSWORD: 'p@ss/word#1',
  DB_SCHEMA: '_analytics',
  LOGFLARE_PUBLIC_ACCESS_TOKEN: 'public-token-0123456789',
  LOGFLARE_PRIVATE_ACCESS_TOKEN: 'private-token-0123456789',
  LOGFLARE_SINGLE_TENANT: 'true',
  LOGFLARE_SUPABASE_MODE: 'true',
  POSTGRES_BACKEND_URL: 'postgresql://supabase_admin:secret@db:5432/_supabase',
  POSTGRES_BACKEND_SCHEMA: '_analytics',
  LOGFLARE_FEATURE_FLAG_OVERRIDE: 'multibackend=true',
};

describe("Configuration: the original's environment", () => {
  it('when DATABASE_URL is unset and DB_* are set, then the database URL is built from them, the password encoded', () => {
    const config = loadConfig(STACK);
    assert.equal(config.databaseUrl, 'postgres://supabase_admin:p%40ss%2Fword%231@db:5432/_supabase');
    assert.equal(new URL(config.databaseUrl ?? '').password, encodeURIComponent('p@ss/word#1'));
  });

  it("when the database is the original's, then the service's tables go to schema logquery and the original's data is found where its variables say", () => {
    const config = loadConfig(STACK);
    assert.equal(config.databaseSchema, 'logquery');
    assert.deepEqual(config.logflare, {
      catalogUrl: config.databaseUrl,
      catalogSchema: '_analytics',
      eventsUrl: 'postgresql://supabase_admin:secret@db:5432/_supabase',
      eventsSchema: '_analytics',
      importOnStart: true,
    });
    assert.deepEqual(
      config.bootstrapKeys.map((k) => k.name),
      ['logflare_private_access_token', 'logflare_public_access_token'],
    );
  });

  it('when DATABASE_URL is set too, then it wins and the schema stays public unless DATABASE_SCHEMA says', () => {
    const config = loadConfig({ ...STACK, DATABASE_URL: 'postgres://u@elsewhere/db' });
    assert.equal(config.databaseUrl, 'postgres://u@elsewhere/db');
    assert.equal(config.databaseSchema, 'public');
    assert.equal(config.logflare?.catalogUrl, 'postgres://supabase_admin:p%40ss%2Fword%231@db:5432/_supabase');
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_SCHEMA: 'mine' }).databaseSchema, 'mine');
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u@h/db' }).logflare, undefined);
  });

  it("when the service's schema would be the original's, or is not a schema name, then the start fails naming it", () => {
    assert.throws(
      () => loadConfig({ ...STACK, DATABASE_SCHEMA: '_analytics' }),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /DATABASE_SCHEMA "_analytics" is the original service's schema/);
        return true;
      },
    );
    assert.throws(() => loadConfig({ ...STACK, DATABASE_SCHEMA: 'a;drop' }), /DATABASE_SCHEMA must be a schema name/);
    assert.throws(() => loadConfig({ ...STACK, DATABASE_SCHEMA: 'logs' }), /DATABASE_SCHEMA must be a schema name/);
    assert.throws(() => loadConfig({ ...STACK, DB_PORT: 'x' }), /DB_PORT must be a whole number/);
    assert.throws(() => loadConfig({ POSTGRES_BACKEND_URL: 'mysql://x' }), /POSTGRES_BACKEND_URL must start with postgres/);
  });

  it('when only POSTGRES_BACKEND_URL is set, then it is the database, and LOGFLARE_IMPORT_ON_START=false turns the import at start off', () => {
    const config = loadConfig({ POSTGRES_BACKEND_URL: 'ecto://u:p@h:5433/_supabase', LOGFLARE_IMPORT_ON_START: 'false' });
    assert.equal(config.databaseUrl, 'postgres://u:p@h:5433/_supabase');
    assert.equal(config.databaseSchema, 'logquery');
    assert.equal(config.logflare?.catalogSchema, 'public');
    assert.equal(config.logflare?.importOnStart, false);
  });

  it('when a schema is set, then every connection of the URL gets it as its search_path, beside its other startup options', () => {
    assert.equal(withSearchPath('postgres://u@h/db', 'public'), 'postgres://u@h/db');
    const url = withSearchPath('postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write&options=-c%20work_mem%3D8MB', 'logquery');
    assert.equal(startupOptions(url), '-c work_mem=8MB -c search_path=logquery');
    assert.equal(startupOptions(url, '-c synchronous_commit=on'), '-c work_mem=8MB -c search_path=logquery -c synchronous_commit=on');
    assert.equal(startupOptions('postgres://u@h/db'), undefined);
  });
});
