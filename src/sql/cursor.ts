/**
 * A cursor over tokens with the parser's vocabulary: look ahead, accept or expect words and
 * operators, read identifiers, and build errors that point at a token. It also counts nesting,
 * so every recursive rule can stop at MAX_DEPTH instead of overflowing the stack.
 */
import { SqlLimitError, SqlSyntaxError, SqlUnsupportedError } from './errors.js';
import { RESERVED } from './keywords.js';
import type { Token } from './lexer.js';

/** Deepest nesting of expressions and queries (CONTRACT.md §2). */
export const MAX_DEPTH = 200;

export class TokenCursor {
  protected i = 0;
  protected depth = 0;

  constructor(protected readonly source: string, protected readonly tokens: readonly Token[]) {}

  protected nested<T>(parse: () => T): T {
    const saved = this.depth;
    this.enter(this.peek());
    try {
      return parse();
    } finally {
      this.depth = saved;
    }
  }

  protected enter(at: Token): void {
    if (++this.depth > MAX_DEPTH) throw new SqlLimitError(`query nested deeper than ${MAX_DEPTH} levels`, this.source, at.start);
  }

  protected peek(ahead = 0): Token {
    return this.tokens[Math.min(this.i + ahead, this.tokens.length - 1)]!;
  }

  protected next(): Token {
    const t = this.peek();
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
    if (!this.isWord(this.peek(), word)) return false;
    this.i++;
    return true;
  }

  protected acceptWords(...words: string[]): boolean {
    if (!words.every((w, k) => this.isWord(this.peek(k), w))) return false;
    this.i += words.length;
    return true;
  }

  protected acceptOp(op: string): boolean {
    if (!this.isOp(this.peek(), op)) return false;
    this.i++;
    return true;
  }

  protected expectWord(word: string): Token {
    const t = this.peek();
    if (!this.isWord(t, word)) throw this.syntax(`expected ${word} but found ${describe(t)}`, t);
    return this.next();
  }

  protected expectOp(op: string): Token {
    const t = this.peek();
    if (!this.isOp(t, op)) throw this.syntax(`expected "${op}" but found ${describe(t)}`, t);
    return this.next();
  }

  /** An identifier; after a dot (`anyWord`) reserved words are fine, as in `t.end`. */
  protected identifier(what: string, anyWord = false): string {
    const t = this.peek();
    if (t.kind === 'quoted' || (t.kind === 'word' && (anyWord || !RESERVED.has(t.upper)))) {
      this.next();
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
    case 'eof': return 'end of query';
    case 'string': return 'a string';
    case 'param': return `@${t.text}`;
    default: return `"${t.text}"`;
  }
}
