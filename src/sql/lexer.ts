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
import { MAX_QUERY_BYTES } from '../inputLimits.js';

/** `bytes`: a BYTES literal (`b'…'`, `rb'…'`); its text is the bytes in hex. */
export type TokenKind = 'word' | 'quoted' | 'string' | 'bytes' | 'number' | 'param' | 'op' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** Identifier or string value after unescaping; operator text; number text. */
  readonly text: string;
  /** Upper-cased `text` for words, to compare with keywords without allocating. */
  readonly upper: string;
  readonly start: number;
  readonly end: number;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '?': '?',
  '"': '"',
  "'": "'",
  '`': '`',
};

// perf: the lexer reads the query's UTF-16 code units from a typed array, with a class table;
// no regex call, no one-character string and no String.prototype call per character. Typed
// arrays also keep it fast where String.prototype methods are slow: any `class … extends String`
// in the process (@redis/client has one, VerbatimString) stops V8 from inlining charCodeAt,
// slice and startsWith, which makes a charCodeAt loop over a query several times slower.
const WORD_START = 1;
const WORD_PART = 2;
/** Characters that start a skip: whitespace, `-` (of `--`) and `#`. */
const SKIP_START = 4;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z_]/.test(ch)) CLASS[c] |= WORD_START | WORD_PART;
  if (/[0-9]/.test(ch)) CLASS[c] |= WORD_PART;
  if (/[ \t\n\r\f\v#-]/.test(ch)) CLASS[c] |= SKIP_START;
}

/** One-character operators by char code (below 128); `<>`, `!=`, `<=`, `>=`, `||`, `<<`, `>>` are read first. */
const ONE_CHAR_OPERATORS: (string | undefined)[] = new Array<string | undefined>(128).fill(undefined);
for (const op of ['(', ')', ',', '.', ';', '[', ']', '*', '+', '-', '/', '=', '<', '>', '|', '&', '^', '~'])
  ONE_CHAR_OPERATORS[op.charCodeAt(0)] = op;

/**
 * The code units of the text being tokenized, then END three times (so looking two units ahead
 * needs no bounds check). One buffer, reused: tokenize is synchronous and not re-entrant.
 * END is U+FFFF, a noncharacter: it matches no class, quote or operator, so scans stop at it;
 * the real end is always checked by position.
 */
const END = 0xffff;
let codes = new Uint16Array(4096);
let codeBytes = Buffer.from(codes.buffer);

function loadCodes(source: string): Uint16Array {
  const n = source.length;
  if (codes.length < n + 3) {
    codes = new Uint16Array(Math.max(n + 3, codes.length * 2));
    codeBytes = Buffer.from(codes.buffer);
  }
  codeBytes.write(source, 0, 'utf16le'); // native copy of the UTF-16 code units, lone surrogates included
  codes[n] = END;
  codes[n + 1] = END;
  codes[n + 2] = END;
  return codes;
}

/**
 * Words seen before, interned by a hash computed while scanning: a word found here reuses its
 * text and upper-case copy, so most words (keywords, names) cost no substring, no upper-casing
 * and no string hashing. Upper-case copies are internalized, so the parser's keyword
 * comparisons are pointer comparisons. Each word's code units are kept in `internCodes` to
 * compare with. Open addressing; cleared when half full, so hostile input cannot grow it.
 */
const INTERN_SLOTS = 4096;
const INTERN_PROBES = 8;
const internText: (string | undefined)[] = new Array<string | undefined>(INTERN_SLOTS).fill(undefined);
const internUpper: string[] = new Array<string>(INTERN_SLOTS).fill('');
const internAt = new Int32Array(INTERN_SLOTS);
const internCodes = new Uint16Array(64 * 1024);
let internedCodes = 0;
let interned = 0;

/** The same string, internalized (V8 internalizes property names). */
function internalized(s: string): string {
  return Object.keys({ [s]: 0 })[0];
}

/** Slot of the word `codes[start, end)` with hash `hash`, or the empty slot to put it in, or -1. */
function internSlot(codes: Uint16Array, start: number, end: number, hash: number): number {
  const length = end - start;
  for (let k = 0, slot = hash & (INTERN_SLOTS - 1); k < INTERN_PROBES; k++, slot = (slot + 1) & (INTERN_SLOTS - 1)) {
    const text = internText[slot];
    if (text === undefined) return slot;
    if (text.length !== length) continue;
    const at = internAt[slot] - start;
    let j = start;
    while (j < end && internCodes[at + j] === codes[j]) j++;
    if (j === end) return slot;
  }
  return -1;
}

/** The upper-case copy of the word internWord returned last. */
let upperOfInterned = '';

/** The text of the word `source[start, end)` (hash `hash`), interned; its upper-case copy in upperOfInterned. */
function internWord(source: string, codes: Uint16Array, start: number, end: number, hash: number): string {
  let slot = internSlot(codes, start, end, hash);
  if (slot >= 0) {
    const text = internText[slot];
    if (text !== undefined) {
      upperOfInterned = internUpper[slot]!;
      return text;
    }
  }
  const text = source.slice(start, end);
  const upper = internalized(text.toUpperCase());
  if (interned >= INTERN_SLOTS / 2 || internedCodes + text.length > internCodes.length) {
    internText.fill(undefined);
    interned = 0;
    internedCodes = 0;
    slot = hash & (INTERN_SLOTS - 1);
  }
  if (slot >= 0 && text.length <= internCodes.length) {
    internText[slot] = text;
    internUpper[slot] = upper;
    internAt[slot] = internedCodes;
    internCodes.set(codes.subarray(start, end), internedCodes);
    internedCodes += text.length;
    interned++;
  }
  upperOfInterned = upper;
  return text;
}

function isWordStart(code: number): boolean {
  return code < 128 && (CLASS[code] & WORD_START) !== 0;
}

function isDigitCode(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Whitespace and `--` / `#` comments from `i`; returns where the next token or `/*` starts. */
function skip(codes: Uint16Array, n: number, i: number): number {
  for (;;) {
    const code = codes[i];
    if (code === 32 || code === 10 || code === 9 || code === 13 || code === 12 || code === 11) i++;
    else if (code === 35 || (code === 45 && codes[i + 1] === 45)) {
      while (i < n && codes[i] !== 10) i++;
    } else return i;
  }
}

export function tokenize(source: string): Token[] {
  // A UTF-8 byte count is only needed when the text could be over the limit.
  if (source.length > MAX_QUERY_BYTES / 4 && Buffer.byteLength(source, 'utf8') > MAX_QUERY_BYTES) {
    throw new SqlLimitError(`query is larger than ${MAX_QUERY_BYTES / 1024} KB`, source, 0);
  }
  const tokens: Token[] = [];
  const n = source.length;
  const codes = loadCodes(source);
  let i = 0;
  for (;;) {
    let code = codes[i];
    while (code === 32 || code === 10 || code === 9 || code === 13) code = codes[++i]!; // the common case, inline
    if (code < 128 && (CLASS[code] & SKIP_START) !== 0) code = codes[(i = skip(codes, n, i))]!;
    if (i >= n) break;
    const start = i;
    if (code < 128 && (CLASS[code] & WORD_START) !== 0) {
      const next = codes[i + 1];
      if (next === 39 || next === 34) {
        if (code === 114 || code === 82) {
          // r'…', R"…"
          const { value, end } = readQuoted(source, codes, i + 1, true);
          tokens.push(token('string', value, value, start, (i = end)));
          continue;
        }
        if (code === 98 || code === 66) {
          // b'…', B"…": BYTES
          const { value, end } = readQuoted(source, codes, i + 1, true);
          const hex = bytesHex(source, value, false, i + 1);
          tokens.push(token('bytes', hex, hex, start, (i = end)));
          continue;
        }
      }
      // rb'…', br'…' (any case): raw BYTES
      const third = codes[i + 2];
      if ((third === 39 || third === 34) && isRawBytesPrefix(code, next)) {
        const { value, end } = readQuoted(source, codes, i + 2, true);
        const hex = bytesHex(source, value, true, i + 2);
        tokens.push(token('bytes', hex, hex, start, (i = end)));
        continue;
      }
      let hash = code;
      for (code = codes[++i]!; code < 128 && (CLASS[code] & WORD_PART) !== 0; code = codes[++i]!) hash = (Math.imul(hash, 31) + code) | 0;
      const text = internWord(source, codes, start, i, hash);
      tokens.push(token('word', text, upperOfInterned, start, i));
    } else if (code === 39 || code === 34) {
      const { value, end } = readQuoted(source, codes, i, false);
      tokens.push(token('string', value, value, start, (i = end)));
    } else if (code === 96) {
      const { value, end } = readQuoted(source, codes, i, false);
      if (value === '') throw new SqlSyntaxError('empty quoted identifier', source, i);
      tokens.push(token('quoted', value, value, start, (i = end)));
    } else if (isDigitCode(code) || (code === 46 && isDigitCode(codes[i + 1]))) {
      i = readNumber(source, codes, i);
      const text = source.slice(start, i);
      tokens.push(token('number', text, text, start, i));
    } else if (code === 64) {
      // @
      const next = codes[i + 1];
      if (next === 64) throw new SqlUnsupportedError('system variables (@@) are not supported', source, i);
      if (!isWordStart(next)) throw new SqlSyntaxError('expected a parameter name after @', source, i);
      let hash = next;
      for (code = codes[(i += 2)]!; code < 128 && (CLASS[code] & WORD_PART) !== 0; code = codes[++i]!)
        hash = (Math.imul(hash, 31) + code) | 0;
      const text = internWord(source, codes, start + 1, i, hash); // interned like a word: the resolver looks names up by it
      tokens.push(token('param', text, text, start, i));
    } else if (code === 47 && codes[i + 1] === 42) {
      // /* … */
      const close = source.indexOf('*/', i + 2);
      if (close < 0) throw new SqlSyntaxError('unterminated /* comment', source, i);
      i = close + 2;
    } else {
      const op = twoCharOperator(code, codes[i + 1]) ?? (code < 128 ? ONE_CHAR_OPERATORS[code] : undefined);
      if (!op) throw new SqlSyntaxError(`unexpected character ${JSON.stringify(source[i])}`, source, i);
      i += op.length;
      tokens.push(token('op', op, op, start, i));
    }
  }
  tokens.push(token('eof', '', '', n, n));
  return tokens;
}

function twoCharOperator(a: number, b: number): string | undefined {
  switch (a) {
    case 60:
      return b === 62 ? '<>' : b === 61 ? '<=' : b === 60 ? '<<' : undefined; // <
    case 62:
      return b === 61 ? '>=' : b === 62 ? '>>' : undefined; // >
    case 33:
      return b === 61 ? '!=' : undefined; // !
    case 124:
      return b === 124 ? '||' : undefined; // |
    case 58:
      return b === 58 ? '::' : undefined; // : (the Postgres-style cast `x::text`)
    case 61:
      return b === 62 ? '=>' : undefined; // = (a named argument, `f(x, name => 1)`)
    default:
      return undefined;
  }
}

function token(kind: TokenKind, text: string, upper: string, start: number, end: number): Token {
  return { kind, text, upper, start, end };
}

const NUMBER = /0[xX][0-9a-fA-F]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/y;

/** End of the number starting at `start`; a letter straight after it (`1abc`) is an error. */
function readNumber(source: string, codes: Uint16Array, start: number): number {
  NUMBER.lastIndex = start;
  NUMBER.test(source);
  const end = NUMBER.lastIndex;
  if (isWordStart(codes[end])) throw new SqlSyntaxError('malformed number', source, start);
  return end;
}

/** Reads a '…', "…", `…` or triple-quoted literal starting at `start` (the opening quote). */
function readQuoted(source: string, codes: Uint16Array, start: number, raw: boolean): { value: string; end: number } {
  const quote = codes[start];
  const triple = quote !== 96 && codes[start + 1] === quote && codes[start + 2] === quote;
  const n = source.length;
  let i = start + (triple ? 3 : 1);
  let value = '';
  // Runs of plain characters are copied with one slice each.
  let run = i;
  while (i < n) {
    const code = codes[i];
    if (code === quote && !triple && quote !== 96 && codes[i + 1] === quote) {
      // `'it''s'`: the doubled quote of standard SQL, which the dashboard writes for a quote in
      // search input; BigQuery itself would read two adjacent literals and refuse them.
      value += source.slice(run, i + 1);
      i += 2;
      run = i;
      continue;
    }
    if (code === quote && (!triple || (codes[i + 1] === quote && codes[i + 2] === quote))) {
      return { value: value + source.slice(run, i), end: i + (triple ? 3 : 1) };
    }
    if (!triple && (code === 10 || code === 13)) break;
    if (code === 0) throw new SqlSyntaxError('NUL characters are not allowed in literals', source, i);
    if (code === 92) {
      // backslash
      value += source.slice(run, i);
      if (raw) {
        value += source.slice(i, i + 2);
        i += 2;
      } else {
        const { text, length } = readEscape(source, i);
        value += text;
        i += length;
      }
      run = i;
      continue;
    }
    i++;
  }
  const what = quote === 96 ? 'quoted identifier' : 'string literal';
  throw new SqlSyntaxError(`unterminated ${what}`, source, start);
}

/** `rb` or `br`, in any case. */
function isRawBytesPrefix(a: number, b: number | undefined): boolean {
  const r = (c: number | undefined) => c === 114 || c === 82;
  const bb = (c: number | undefined) => c === 98 || c === 66;
  return (r(a) && bb(b)) || (bb(a) && r(b));
}

/**
 * The bytes of a BYTES literal, in hex, from its text as written (escapes kept). As BigQuery
 * reads them: characters are their UTF-8 bytes, `\xhh` and `\ooo` are one byte each, the simple
 * escapes their character; `\u` and `\U` are refused, as BigQuery refuses them in BYTES. A raw
 * literal (`rb'…'`) is its characters' UTF-8 bytes, backslashes included.
 */
function bytesHex(source: string, text: string, raw: boolean, at: number): string {
  if (raw) return Buffer.from(text, 'utf8').toString('hex');
  const out: number[] = [];
  for (let i = 0; i < text.length;) {
    if (text[i] !== '\\') {
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      for (const b of Buffer.from(ch, 'utf8')) out.push(b);
      i += ch.length;
      continue;
    }
    const e = text[i + 1];
    if (e === 'x' || e === 'X') {
      const digits = text.slice(i + 2, i + 4);
      if (!/^[0-9a-fA-F]{2}$/.test(digits)) throw new SqlSyntaxError(`invalid escape sequence \\${e} in a BYTES literal`, source, at);
      out.push(parseInt(digits, 16));
      i += 4;
    } else if (e !== undefined && e >= '0' && e <= '7') {
      const digits = text.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(digits) || parseInt(digits, 8) > 255)
        throw new SqlSyntaxError('invalid octal escape in a BYTES literal', source, at);
      out.push(parseInt(digits, 8));
      i += 4;
    } else if (e === 'u' || e === 'U') {
      throw new SqlSyntaxError(`\\${e} escapes are not allowed in a BYTES literal`, source, at);
    } else if (e !== undefined && SIMPLE_ESCAPES[e] !== undefined) {
      out.push(SIMPLE_ESCAPES[e].charCodeAt(0));
      i += 2;
    } else {
      throw new SqlSyntaxError(`invalid escape sequence \\${e ?? ''} in a BYTES literal`, source, at);
    }
  }
  return Buffer.from(out).toString('hex');
}

function readEscape(source: string, at: number): { text: string; length: number } {
  const e = source[at + 1];
  if (e === undefined) throw new SqlSyntaxError('unterminated escape sequence', source, at);
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) return { text: simple, length: 2 };
  const hexLength = e === 'x' || e === 'X' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
  // A backslash before a character that starts no escape (`'\s+'`, `'@example\.com$'` in a
  // regular expression) is kept as written, as the original service's users rely on.
  if (!hexLength && !(e >= '0' && e <= '7')) return { text: source.slice(at, at + 2), length: 2 };
  const digits = hexLength ? source.slice(at + 2, at + 2 + hexLength) : source.slice(at + 1, at + 4);
  const valid = hexLength ? digits.length === hexLength && /^[0-9a-fA-F]+$/.test(digits) : /^[0-7]{3}$/.test(digits);
  if (!valid) throw new SqlSyntaxError(`invalid escape sequence \\${e}`, source, at);
  const code = parseInt(digits, hexLength ? 16 : 8);
  if (code === 0 || code > 0x10ffff) throw new SqlSyntaxError('escape sequence out of range', source, at);
  return { text: String.fromCodePoint(code), length: hexLength ? 2 + hexLength : 4 };
}
