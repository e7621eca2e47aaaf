import { dropTestDatabases } from './db.js';

/** Mocha root hooks: every database a run creates is dropped at its end, pass or fail. */
export const mochaHooks = {
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await dropTestDatabases();
  },
};
