/**
 * The table names a query writes, from its parse tree alone (no resolution): every `FROM x`
 * and `JOIN x` at any depth, and the names of every CTE it defines at any depth. What the
 * endpoints layer uses to find which endpoints may read a source or another endpoint.
 *
 *   queryTables('with a as (select * from `x.y`) select * from a join b using (id)')
 *   // → { tables: ['x.y', 'a', 'b'], ctes: ['a'] }   (CTE names lower-cased)
 */
import { parseQuery } from './parser.js';
import { forEachNode } from './walk.js';
import { tokenize, type Token } from './lexer.js';

export interface QueryTables {
  /** Table names as written, in first-use order, without repeats. */
  readonly tables: readonly string[];
  /** CTE names defined anywhere in the query, lower-cased (CTE names are case-insensitive). */
  readonly ctes: readonly string[];
}

/** Throws SqlError when the query does not parse. */
export function queryTables(query: string): QueryTables {
  const tables = new Set<string>();
  const ctes = new Set<string>();
  forEachNode(parseQuery(query), (n) => {
    if (n.kind === 'table' && typeof n.name === 'string') tables.add(n.name);
    if (n.kind === 'cte' && typeof n.name === 'string') ctes.add(n.name.toLowerCase());
  });
  return { tables: [...tables], ctes: [...ctes] };
}

/**
 * `query` with the tables named in `renames` (name as written → new name) renamed where they are
 * read (`FROM`/`JOIN`, at any depth; never a CTE of that name), each written back as one quoted
 * name. The rest of the text is kept byte for byte. What the importer uses to bring a query of
 * the original service up to date with its `source_mapping` (src/import/logflare/catalog.ts).
 *
 *   renameTables('select * from `old.name` o join t using (id)', new Map([['old.name', 'new.name']]))
 *   // → 'select * from `new.name` o join t using (id)'
 *
 * Throws SqlError when the query does not parse.
 */
export function renameTables(query: string, renames: ReadonlyMap<string, string>): string {
  const starts = new Map<number, string>();
  const ctes = new Set(queryTables(query).ctes);
  forEachNode(parseQuery(query), (n) => {
    if (n.kind !== 'table' || typeof n.name !== 'string' || ctes.has(n.name.toLowerCase())) return;
    const to = renames.get(n.name);
    if (to !== undefined && to !== n.name) starts.set(n.pos as number, to);
  });
  if (!starts.size) return query;
  const tokens = tokenize(query);
  const edits: { start: number; end: number; text: string }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const to = starts.get(tokens[i].start);
    if (to === undefined) continue;
    // The parser's table name: a name, then `.name` as long as they follow (src/sql/parser.ts, tableName).
    let last = i;
    while (tokens[last + 1]?.kind === 'op' && tokens[last + 1].text === '.' && isName(tokens[last + 2])) last += 2;
    edits.push({ start: tokens[i].start, end: tokens[last].end, text: '`' + to.replace(/[`\\]/g, (c) => '\\' + c) + '`' });
  }
  let out = query;
  for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

function isName(t: Token | undefined): boolean {
  return t !== undefined && (t.kind === 'word' || t.kind === 'quoted');
}
