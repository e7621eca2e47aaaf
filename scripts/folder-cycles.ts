/**
 * Lint step (`npm run lint`): no import cycle between the folders of `src/` (docs/ARCHITECTURE.md,
 * "Layers"). ESLint's import-x/no-cycle sees cycles between modules; this sees them between
 * layers, where `auth` importing `rateLimit` while `rateLimit` imports `auth` makes both one
 * layer in fact. A unit is a folder directly under `src/`, or a file directly in `src/`.
 * Type-only imports count too: they tie the layers' vocabularies together all the same.
 *
 *   npx tsx scripts/folder-cycles.ts      # prints each cycle with one import that closes it; exit 1
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '..', 'src');
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* sourceFiles(full);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield full;
  }
}

/** The layer a file of `src/` belongs to: its top folder, or itself when it sits in `src/`. */
function unitOf(file: string): string {
  const [first, ...rest] = path.relative(SRC, file).split(path.sep);
  return rest.length ? first : first.replace(/\.ts$/, '');
}

/** Folder → folder → one `file → import` that makes the edge (for the message). */
const edges = new Map<string, Map<string, string>>();
for (const file of sourceFiles(SRC)) {
  const from = unitOf(file);
  for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = path.resolve(path.dirname(file), match[1] ?? match[2]);
    if (!target.startsWith(SRC + path.sep)) continue;
    const to = unitOf(target.replace(/\.js$/, '.ts'));
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const out = edges.get(from)!;
    if (!out.has(to)) out.set(to, `${path.relative(SRC, file)} → ${match[1] ?? match[2]}`);
  }
}

// Tarjan's strongly connected components: each with more than one unit is a cycle of layers.
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const cycles: string[][] = [];
let next = 0;
function visit(v: string): void {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const v of edges.keys()) if (!index.has(v)) visit(v);

if (cycles.length) {
  for (const component of cycles) {
    console.error(`import cycle between the folders of src/: ${component.join(', ')}`);
    const inside = new Set(component);
    for (const from of component)
      for (const [to, via] of edges.get(from) ?? []) if (inside.has(to)) console.error(`  ${from} → ${to}: ${via}`);
  }
  process.exit(1);
}
console.log(
  `no import cycle between the ${new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]).size} folders and files of src/`,
);
