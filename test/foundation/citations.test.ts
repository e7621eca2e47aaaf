/**
 * The repository stands on its own: every path of this repository that its docs and comments
 * cite (`docs/API.md`, `src/sql/passes.ts`) exists, and nothing cites the planning documents
 * that were never part of it. A file that moves without its citations being updated fails here.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const ROOT = new URL('../..', import.meta.url).pathname;

/** Cited paths: a top-level folder of this repository, then a path that does not end in punctuation. */
const CITED = /(?<![\w./-])((?:docs|src|test|bench|migrations|seeds|console|\.ci)\/[\w./-]*\w)/g;
/** Files whose citations name another repository's files (the original service's tests they were taken from). */
const CITES_OTHER_REPOSITORIES = new Set(['test/compat/original/README.md']);
/** Written by the benchmarks, the console tests or `npm run openapi:types`, not committed (.gitignore). */
const GENERATED = /^bench\/results(\/|$)|^test\/console\/screenshots|^console\/src\/api\/schema\.d\.ts$/;
/** Documents that guided the project's planning and are not in it. */
const OUTSIDE = /\b(CONTRACT|SEED-SPEC|DESIGN|DEVELOPERS|STYLE)\.md\b|\.\.\/shared\//;

function trackedTextFiles(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f && /\.(ts|tsx|js|md|yml|yaml|sh|html|css)$|(^|\/)(run|Dockerfile)$/.test(f) && !f.endsWith('schema.d.ts'));
}

describe('citations', () => {
  const files = trackedTextFiles();

  it('when a doc or comment cites a path of this repository, then that path exists', () => {
    const missing: string[] = [];
    for (const file of files) {
      if (CITES_OTHER_REPOSITORIES.has(file) || file === 'test/foundation/citations.test.ts') continue;
      for (const [, path] of readFileSync(ROOT + file, 'utf8').matchAll(CITED)) {
        if (!GENERATED.test(path) && !existsSync(ROOT + path)) missing.push(`${file} cites ${path}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('when a doc or comment gives a reason, then it cites this repository, never a planning document outside it', () => {
    const outside = files.filter((f) => f !== 'test/foundation/citations.test.ts' && OUTSIDE.test(readFileSync(ROOT + f, 'utf8')));
    assert.deepEqual(outside, []);
  });
});
