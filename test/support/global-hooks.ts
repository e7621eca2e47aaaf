import { dropOrphanedTestDatabases, dropTestDatabases, report } from './db.js';

/**
 * Mocha root hooks: every database a run creates is dropped at its end, pass or fail; a run
 * first drops what runs killed before their end left behind (README.md, "Tests").
 */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await dropOrphanedTestDatabases().catch((err: Error) => report(`test databases of runs that are gone not looked for: ${err.message}`));
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await dropTestDatabases();
  },
};
