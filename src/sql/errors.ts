/**
 * The translator's error family. Every error points at the offending text: `line` and `column`
 * are 1-based, `snippet` is that line with a caret under the column, so an HTTP layer can answer
 * 400 with something a person can act on.
 */
export class SqlError extends Error {
  readonly line: number;
  readonly column: number;
  readonly snippet: string;

  constructor(detail: string, source: string, offset: number) {
    const { line, column, snippet } = locate(source, offset);
    super(`${detail} (line ${line}, column ${column})`);
    this.name = new.target.name;
    this.line = line;
    this.column = column;
    this.snippet = snippet;
  }
}

/** The text does not parse. */
export class SqlSyntaxError extends SqlError {}
/** Valid BigQuery that this translator does not support (QUALIFY, PIVOT, DML, window functions, …). */
export class SqlUnsupportedError extends SqlError {}
/** Unknown table, field or function; the message carries a "did you mean" when one is close. */
export class SqlNameError extends SqlError {}
/** A sandboxed query reached outside the endpoint's CTEs, or printed SQL failed the Postgres wall. */
export class SqlSandboxError extends SqlError {}
/** Input too large or too deeply nested. */
export class SqlLimitError extends SqlError {}
/**
 * Endpoints that read endpoints in a cycle (`a → b → a`), or nested deeper than the limit.
 * `chain` is the names from the outermost endpoint to the refused reference. Not a fault of
 * one position: the endpoint definitions themselves must change (422).
 */
export class SqlNestingError extends SqlError {
  /** The message without its position, to raise it again at the outer reference. */
  readonly detail: string;
  constructor(
    detail: string,
    source: string,
    offset: number,
    readonly chain: readonly string[] = [],
  ) {
    super(detail, source, offset);
    this.detail = detail;
  }
}

/**
 * Something the query may not mean, that does not stop it: a field no event has brought yet
 * reads as NULL (docs/COMPATIBILITY.md, "Unknown fields"). Reported when an endpoint is saved and by
 * `GET /api/endpoints/:x/sql`, positioned like an error.
 */
export interface SqlWarning {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

export function sqlWarning(detail: string, source: string, offset: number): SqlWarning {
  const { line, column } = locate(source, offset);
  return { message: `${detail} (line ${line}, column ${column})`, line, column };
}

export type SqlErrorClass = new (detail: string, source: string, offset: number) => SqlError;

function locate(source: string, offset: number): { line: number; column: number; snippet: string } {
  const at = Math.max(0, Math.min(offset, source.length));
  const lineStart = source.lastIndexOf('\n', at - 1) + 1;
  let lineEnd = source.indexOf('\n', at);
  if (lineEnd < 0) lineEnd = source.length;
  let line = 1;
  for (let i = source.indexOf('\n'); i >= 0 && i < lineStart; i = source.indexOf('\n', i + 1)) line++;
  const column = at - lineStart + 1;
  const text = source.slice(lineStart, Math.min(lineEnd, lineStart + 200));
  return { line, column, snippet: `${text}\n${' '.repeat(Math.min(column - 1, 200))}^` };
}

/** Closest candidate by Levenshtein distance, if it is close enough to be a plausible typo. */
export function suggest(name: string, candidates: Iterable<string>): string | undefined {
  // security: Levenshtein costs length × length per candidate, on the event loop. A 49 KB unknown
  // name against 50 KB of column names took 51 s (test/security/walls.test.ts, "did you mean").
  // Long names get no suggestion, and a candidate whose length alone puts it out of reach is skipped.
  // The work is also bounded in cells of the distance table: per call, and per translation
  // (withSuggestionBudget), past which the best candidate so far (or none) is the answer. 100
  // unknown names over a schema of 100,000 fields blocked the event loop 11.8 s (issue 25).
  if (name.length > MAX_SUGGEST_LENGTH) return undefined;
  const reach = Math.max(2, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = name.toLowerCase();
  let cells = Math.min(MAX_SUGGEST_CELLS_PER_CALL, cellsLeft);
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - name.length) > reach) continue;
    const cost = (candidate.length + 1) * (name.length + 1);
    if (cost > cells) break;
    cells -= cost;
    if (cellsLeft !== Infinity) cellsLeft -= cost;
    const d = levenshtein(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= reach ? best : undefined;
}

const MAX_SUGGEST_LENGTH = 64;
/** Cells of distance tables one suggestion may compute: about 5 ms here. */
export const MAX_SUGGEST_CELLS_PER_CALL = 500_000;
/** Cells all the suggestions of one translation may compute together: about 30 ms here. */
export const MAX_SUGGEST_CELLS_PER_TRANSLATION = 3_000_000;
/** Cells left to the translation running now (translations are synchronous); Infinity outside one. */
let cellsLeft = Infinity;

/** Runs `f` (one translation) with MAX_SUGGEST_CELLS_PER_TRANSLATION for all its suggestions. */
export function withSuggestionBudget<T>(f: () => T): T {
  const outer = cellsLeft;
  cellsLeft = Math.min(outer, MAX_SUGGEST_CELLS_PER_TRANSLATION);
  try {
    return f();
  } finally {
    cellsLeft = outer;
  }
}

export function didYouMean(name: string, candidates: Iterable<string>): string {
  const s = suggest(name, candidates);
  return s === undefined ? '' : `; did you mean ${s}?`;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}
