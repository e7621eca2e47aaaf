/**
 * src/query/studioReports.ts is the service's copy of Studio's report queries, kept warm by
 * src/query/reportWarmup.ts: it must stay the dashboard's own text (the corpus,
 * test/compat/studio/queries.json), or the warm shapes would not be the ones Studio's loads ask for.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { STUDIO_REPORTS } from '../../src/query/studioReports.js';

const corpus = JSON.parse(readFileSync(new URL('../compat/studio/queries.json', import.meta.url), 'utf8')) as Array<{
  id: string;
  sql: string;
}>;

describe("Studio's report queries kept warm", () => {
  it('are the default query of every chart of the API, shared-API, Storage and Auth report pages, in the dashboard corpus, word for word', () => {
    const pages = corpus.filter((q) => /^reports\/(api|shared-api\/[a-z]+|storage|auth)\/[A-Za-z]+$/.test(q.id));
    assert.deepEqual(
      STUDIO_REPORTS.map((r) => r.id),
      pages.map((q) => q.id),
    );
    for (const report of STUDIO_REPORTS) assert.equal(report.sql, corpus.find((q) => q.id === report.id)!.sql, report.id);
  });
});
