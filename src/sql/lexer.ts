/**
 * BigQuery lexer: turns query text into tokens with source offsets.
 *
 *   tokenize("select `a.b` from t -- c")  →  word select, quoted a.b, word from, word t, eof
 *
 * Strings may use '…' or "…" (BigQuery treats both as string literals), triple quotes and an
 * r/R raw prefix; backslash escapes follow BigQuery. Backticks quote identifiers, which may then
 * contain dots and dashes (`cloudflare.logs.prod`, `deno-relay-logs`).
 */
import { SqlLimitError, SqlSyntaxError, SqlUnsupportedError } from './errors.js';

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'param' | 'op' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Identifier or string value after unescaping; operator text; number text. */
  readonly text: string;
  /** Upper-cased `text` for words, to compare with keywords without allocating. */
  readonly upper: string;
  readonly start: number;
  readonly end: number;
}

/** Larger inputs are refused before any work (CONTRACT.md §2: `sql` up to 100 KB). */
export const MAX_QUERY_BYTES = 100 * 1024;

const TWO_CHAR_OPERATORS = new Set(['<>', '!=', '<=', '>=', '||', '<<', '>>']);
const ONE_CHAR_OPERATORS = new Set(['(', ')', ',', '.', ';', '[', ']', '*', '+', '-', '/', '=', '<', '>', '|', '&', '^', '~']);
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '?': '?', '"': '"', "'": "'", '`': '`',
};

/** Whitespace and line comments, skipped in one sticky-regex step (much faster than a char loop). */
const SKIP = /(?:[ \t\n\r\f\v]+|--[^\n]*|#[^\n]*)+/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;

function isWordStart(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95;
}

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function tokenize(source: string): Token[] {
  // A UTF-8 byte count is only needed when the text could be over the limit.
  if (source.length > MAX_QUERY_BYTES / 4 && Buffer.byteLength(source, 'utf8') > MAX_QUERY_BYTES) {
    throw new SqlLimitError(`query is larger than ${MAX_QUERY_BYTES / 1024} KB`, source, 0);
  }
  const tokens: Token[] = [];
  const n = source.length;
  let i = 0;
  for (;;) {
    let code = source.charCodeAt(i);
    while (code === 32) code = source.charCodeAt(++i); // the common case, without a regex call
    if (code === 10 || code === 9 || code === 13 || code === 45 || code === 35 || code === 12 || code === 11) {
      SKIP.lastIndex = i;
      if (SKIP.test(source)) code = source.charCodeAt((i = SKIP.lastIndex));
    }
    if (i >= n) break;
    const c = source[i]!;
    const start = i;
    if (c === '/' && source[i + 1] === '*') {
      const close = source.indexOf('*/', i + 2);
      if (close < 0) throw new SqlSyntaxError('unterminated /* comment', source, i);
      i = close + 2;
    } else if (isWordStart(code)) {
      const next = source[i + 1];
      if (next === "'" || next === '"') {
        if (c === 'r' || c === 'R') {
          const { value, end } = readQuoted(source, i + 1, true);
          tokens.push(token('string', value, start, (i = end)));
          continue;
        }
        if (c === 'b' || c === 'B') throw new SqlUnsupportedError('BYTES literals are not supported', source, i);
      }
      WORD.lastIndex = i;
      WORD.test(source);
      i = WORD.lastIndex;
      tokens.push(token('word', source.slice(start, i), start, i));
    } else if (c === "'" || c === '"') {
      const { value, end } = readQuoted(source, i, false);
      tokens.push(token('string', value, start, (i = end)));
    } else if (c === '`') {
      const { value, end } = readQuoted(source, i, false);
      if (value === '') throw new SqlSyntaxError('empty quoted identifier', source, i);
      tokens.push(token('quoted', value, start, (i = end)));
    } else if (isDigitCode(code) || (c === '.' && isDigitCode(source.charCodeAt(i + 1)))) {
      i = readNumber(source, i);
      tokens.push(token('number', source.slice(start, i), start, i));
    } else if (c === '@') {
      if (source[i + 1] === '@') throw new SqlUnsupportedError('system variables (@@) are not supported', source, i);
      if (!isWordStart(source.charCodeAt(i + 1))) throw new SqlSyntaxError('expected a parameter name after @', source, i);
      WORD.lastIndex = i + 1;
      WORD.test(source);
      i = WORD.lastIndex;
      tokens.push(token('param', source.slice(start + 1, i), start, i));
    } else {
      const two = source.slice(i, i + 2);
      const op = TWO_CHAR_OPERATORS.has(two) ? two : ONE_CHAR_OPERATORS.has(c) ? c : undefined;
      if (!op) throw new SqlSyntaxError(`unexpected character ${JSON.stringify(c)}`, source, i);
      i += op.length;
      tokens.push(token('op', op, start, i));
    }
  }
  tokens.push(token('eof', '', n, n));
  return tokens;
}

function token(kind: TokenKind, text: string, start: number, end: number): Token {
  return { kind, text, upper: kind === 'word' ? text.toUpperCase() : text, start, end };
}



const NUMBER = /0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;

/** End of the number starting at `start`; a letter straight after it (`1abc`) is an error. */
function readNumber(source: string, start: number): number {
  NUMBER.lastIndex = start;
  NUMBER.test(source);
  const end = NUMBER.lastIndex;
  if (isWordStart(source.charCodeAt(end))) throw new SqlSyntaxError('malformed number', source, start);
  return end;
}

/** Reads a '…', "…", `…` or triple-quoted literal starting at `start` (the opening quote). */
function readQuoted(source: string, start: number, raw: boolean): { value: string; end: number } {
  const quote = source[start]!;
  const triple = quote !== '`' && source.startsWith(quote.repeat(3), start);
  const close = triple ? quote.repeat(3) : quote;
  let i = start + close.length;
  let value = '';
  while (i < source.length) {
    const c = source[i]!;
    if (source.startsWith(close, i)) return { value, end: i + close.length };
    if (!triple && (c === '\n' || c === '\r')) break;
    if (c === '\0') throw new SqlSyntaxError('NUL characters are not allowed in literals', source, i);
    if (c === '\\') {
      if (raw) {
        value += c + (source[i + 1] ?? '');
        i += 2;
        continue;
      }
      const { text, length } = readEscape(source, i);
      value += text;
      i += length;
      continue;
    }
    value += c;
    i++;
  }
  const what = quote === '`' ? 'quoted identifier' : 'string literal';
  throw new SqlSyntaxError(`unterminated ${what}`, source, start);
}

function readEscape(source: string, at: number): { text: string; length: number } {
  const e = source[at + 1];
  if (e === undefined) throw new SqlSyntaxError('unterminated escape sequence', source, at);
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) return { text: simple, length: 2 };
  const hexLength = e === 'x' || e === 'X' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
  const digits = hexLength ? source.slice(at + 2, at + 2 + hexLength) : source.slice(at + 1, at + 4);
  const valid = hexLength ? digits.length === hexLength && /^[0-9a-fA-F]+$/.test(digits) : /^[0-7]{3}$/.test(digits);
  if (!valid) throw new SqlSyntaxError(`invalid escape sequence \\${e}`, source, at);
  const code = parseInt(digits, hexLength ? 16 : 8);
  if (code === 0 || code > 0x10ffff) throw new SqlSyntaxError('escape sequence out of range', source, at);
  return { text: String.fromCodePoint(code), length: hexLength ? 2 + hexLength : 4 };
}
