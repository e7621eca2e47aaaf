/**
 * Rewrites the function coverage table of docs/COMPATIBILITY.md from BigQuery's reference
 * (src/sql/library/reference.ts) and the function table: `npm run docs:functions`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withCoverage } from '../src/sql/library/coverage.js';

const path = new URL('../docs/COMPATIBILITY.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withCoverage(before);
writeFileSync(path, after);
console.log(
  after === before ? 'docs/COMPATIBILITY.md: the function coverage is up to date' : 'docs/COMPATIBILITY.md: function coverage rewritten',
);
