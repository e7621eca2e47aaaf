/**
 * The function coverage table of docs/COMPATIBILITY.md is generated from BigQuery's reference
 * (src/sql/library/reference.ts) and the function table; it must say what the code does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FUNCTIONS } from '../../src/sql/functions.js';
import { isSupported, withCoverage } from '../../src/sql/library/coverage.js';
import { REFERENCE } from '../../src/sql/library/reference.js';

describe('the function coverage table', () => {
  it('when docs/COMPATIBILITY.md is read, then its coverage table is the one the catalogue and the function table give (npm run docs:functions)', () => {
    const doc = readFileSync(new URL('../../docs/COMPATIBILITY.md', import.meta.url), 'utf8');
    assert.equal(doc, withCoverage(doc), 'run `npm run docs:functions` and commit docs/COMPATIBILITY.md');
  });

  it('when a function is listed once per category, then no name is listed twice and every unsupported one says why or is left to translate', () => {
    const names = REFERENCE.map((f) => `${f.category}/${f.name}`);
    assert.equal(new Set(names).size, names.length);
    for (const f of REFERENCE) {
      if (f.missing) assert.ok(!isSupported(f), `${f.name} is supported: drop its "missing" note`);
      if (f.syntax) assert.ok(!Object.prototype.hasOwnProperty.call(FUNCTIONS, f.name.toLowerCase()), `${f.name} is syntax and a function`);
    }
  });
});
