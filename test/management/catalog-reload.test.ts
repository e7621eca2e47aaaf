/**
 * The in-memory source catalog (SourceService.reload): overlapping reloads answer in any order and
 * an older answer never replaces a newer one; the background reload logs its failures.
 */
import assert from 'node:assert/strict';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { startBackgroundJobs } from '../../src/jobs.js';
import { SourceService } from '../../src/sources/service.js';
import { createEmptyDatabase, testConfig, testDatabase } from '../support/db.js';
import { capturingLogger } from '../support/log.js';
import { eventually } from '../support/wait.js';
import { failOnUnhandledRejections } from '../support/rejections.js';

describe('source catalog reloads', function () {
  this.timeout(60_000);
  failOnUnhandledRejections();

  it('when a reload that started earlier answers after a later one, then the catalog keeps the later answer', async () => {
    const { context } = await testDatabase();
    const catalog = new SourceService(context.db, 30, async () => []);
    await catalog.reload();
    // The first reload's rows are read at once but handed over only when released.
    const list = catalog.repository.list.bind(catalog.repository);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    catalog.repository.list = async () => {
      const rows = await list();
      if (++calls === 1) await released;
      return rows;
    };
    const older = catalog.reload();
    await eventually(() => calls === 1, 5_000);

    const name = `reload.race.${Date.now().toString(36)}`;
    await context.sources.create({ name }); // another instance's change
    await catalog.reload();
    assert.ok(catalog.lookup(name), 'the later reload sees the new source');
    const version = catalog.catalogVersion;

    release();
    await older;
    assert.ok(catalog.lookup(name), 'the older answer did not bring back the catalog without it');
    assert.equal(catalog.catalogVersion, version);
    await context.sources.delete(name);
  });

  it('when the background reload fails, then the failure is logged and the next one runs', async () => {
    const { url } = await createEmptyDatabase('lq_reload_timer');
    const { logger, lines } = capturingLogger();
    const ctx: AppContext = await createContext(testConfig(url), createLogger('silent'));
    const jobs = startBackgroundJobs({ ...ctx, logger }, { catalogReloadMs: 100 });
    try {
      const list = ctx.sources.repository.list.bind(ctx.sources.repository);
      let failures = 0;
      let calls = 0;
      ctx.sources.repository.list = async () => {
        calls++;
        if (failures < 2) {
          failures++;
          throw new Error('catalog unreadable');
        }
        return list();
      };
      const logged = () => lines.filter((l) => /source catalog reload failed/.test(l.msg));
      assert.ok(await eventually(() => logged().length === 2 && calls > 2, 10_000), JSON.stringify(lines));
      assert.equal(logged()[0].err, 'catalog unreadable');
      assert.equal(logged()[0].level, 40, 'a warning');
    } finally {
      jobs.stop();
      await ctx.close();
    }
  });
});
