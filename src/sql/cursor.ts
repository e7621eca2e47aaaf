/**
 * A cursor over tokens with the parser's vocabulary: look ahead, accept or expect words and
 * operators, read identifiers, and build errors that point at a token. It also counts nesting,
 * so every recursive rule can stop at MAX_SQL_NESTING instead of overflowing the stack.
 */
import { SqlLimitError, SqlSyntaxError, SqlUnsupportedError } from './errors.js';
import { RESERVED } from './keywords.js';
import type { Token } from './lexer.js';
import { MAX_SQL_NESTING } from '../inputLimits.js';

export class TokenCursor {
  /** Index of the current token; never past the final eof token. */
  protected i = 0;
  protected depth = 0;
  private readonly last: number;

  constructor(
    protected readonly source: string,
    protected readonly tokens: readonly Token[],
  ) {
    this.last = tokens.length - 1;
  }

  // perf: rules save and restore `depth` inline (`const saved = this.depth; this.enter(…); …;
  // this.depth = saved`) rather than through a closure with try/finally: a syntax error ends the
  // whole parse, so the depth never needs restoring on the way out.

  protected enter(at: Token): void {
    if (++this.depth > MAX_SQL_NESTING)
      throw new SqlLimitError(`query nested deeper than ${MAX_SQL_NESTING} levels`, this.source, at.start);
  }

  /** The current token (eof at the end). */
  protected peek(): Token {
    return this.tokens[this.i];
  }

  /** The token `ahead` places after the current one (eof past the end). */
  protected peekAt(ahead: number): Token {
    return this.tokens[Math.min(this.i + ahead, this.last)];
  }

  protected next(): Token {
    const t = this.tokens[this.i];
    if (t.kind !== 'eof') this.i++;
    return t;
  }

  protected isWord(t: Token, word: string): boolean {
    return t.kind === 'word' && t.upper === word;
  }

  protected isOp(t: Token, op: string): boolean {
    return t.kind === 'op' && t.text === op;
  }

  protected acceptWord(word: string): boolean {
    const t = this.tokens[this.i];
    if (t.kind !== 'word' || t.upper !== word) return false;
    this.i++;
    return true;
  }

  /** Two words in a row (`ORDER BY`, `GROUP BY`), or nothing. */
  protected acceptWords(first: string, second: string): boolean {
    if (!this.isWord(this.tokens[this.i], first) || !this.isWord(this.peekAt(1), second)) return false;
    this.i += 2;
    return true;
  }

  /** Three words in a row (`LEFT OUTER JOIN`), or nothing. */
  protected acceptThreeWords(first: string, second: string, third: string): boolean {
    if (!this.isWord(this.tokens[this.i], first) || !this.isWord(this.peekAt(1), second) || !this.isWord(this.peekAt(2), third))
      return false;
    this.i += 3;
    return true;
  }

  protected acceptOp(op: string): boolean {
    const t = this.tokens[this.i];
    if (t.kind !== 'op' || t.text !== op) return false;
    this.i++;
    return true;
  }

  protected expectWord(word: string): Token {
    const t = this.tokens[this.i];
    if (!this.isWord(t, word)) throw this.syntax(`expected ${word} but found ${describe(t)}`, t);
    this.i++;
    return t;
  }

  protected expectOp(op: string): Token {
    const t = this.tokens[this.i];
    if (!this.isOp(t, op)) throw this.syntax(`expected "${op}" but found ${describe(t)}`, t);
    this.i++;
    return t;
  }

  /** An identifier; after a dot (`anyWord`) reserved words are fine, as in `t.end`. */
  protected identifier(what: string, anyWord = false): string {
    const t = this.tokens[this.i];
    if (t.kind === 'quoted' || (t.kind === 'word' && (anyWord || !RESERVED.has(t.upper)))) {
      this.i++;
      return t.text;
    }
    throw this.syntax(`expected ${what} but found ${describe(t)}`, t);
  }

  protected syntax(message: string, at: Token): SqlSyntaxError {
    return new SqlSyntaxError(message, this.source, at.start);
  }

  protected unsupported(message: string, at: Token): SqlUnsupportedError {
    return new SqlUnsupportedError(message, this.source, at.start);
  }
}

/** How a token is named in an error message. */
export function describe(t: Token): string {
  switch (t.kind) {
    case 'eof':
      return 'end of query';
    case 'string':
      return 'a string';
    case 'bytes':
      return 'a BYTES literal';
    case 'param':
      return `@${t.text}`;
    default:
      return `"${t.text}"`;
  }
}
