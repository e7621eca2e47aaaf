import { dropOrphanedTestDatabases, dropTestDatabases, report } from './db.js';

/**
 * Mocha root hooks: every database a run creates is dropped at its end, pass or fail; a run
 * first drops what runs killed before their end left behind (README.md, "Tests").
 *
 * A run stopped by SIGINT (Ctrl-C) or SIGTERM (a CI step's time limit) drops its databases on the
 * way out too: mocha has no handler of its own for them (serial mode), so the process used to end
 * at once and leave them for the next run's sweep, which waits an hour. The signals that follow
 * are ignored (mocha's wrapper process passes a SIGINT on as SIGINT and SIGTERM at once); the
 * process ends when the drops are done, or after LEAVE_WITHIN_MS in any case (SIGKILL still ends
 * it at once).
 */
const LEAVE_WITHIN_MS = 30_000;
let leaving = false;
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    if (leaving) return;
    leaving = true;
    report(`${signal}: dropping this run's test databases`);
    setTimeout(() => process.exit(code), LEAVE_WITHIN_MS);
    void dropTestDatabases({ closeContexts: false }).finally(() => process.exit(code));
  });
}

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
