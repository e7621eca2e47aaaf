/**
 * BigQuery's regular expressions are RE2's; Postgres reads its own "advanced" syntax (ARE). Where
 * the two read one pattern differently, the pattern is rewritten here; where Postgres cannot say
 * what RE2 means (Unicode classes, flags in mid-pattern), or RE2 refuses what Postgres would take
 * (back references, look-arounds), it is refused, as BigQuery would refuse it.
 *
 * What differs (RE2 → Postgres):
 * - `.` does not match a newline in RE2 (without `(?s)`): `[^\n]`.
 * - `\b` / `\B` are word boundaries in RE2, a backspace in Postgres: `\y` / `\Y`. `\z` is `\Z`.
 * - `\d`, `\s`, `\w` are ASCII in RE2 (Postgres' follow the locale): `[0-9]`, `[\t\n\f\r ]`,
 *   `[0-9A-Za-z_]`, and their negations.
 * - In a bracket, a `-` that cannot make a range is literal in RE2 (`[a-zA-Z0-9-.]`); Postgres
 *   calls it an invalid range: `\-`.
 * - A `{` that starts no repetition is literal in RE2: `\{`.
 * - `(?P<name>…)` / `(?<name>…)` are groups: `(…)`. `\Q…\E` quotes: each character escaped.
 * - `(?i)`, `(?s)`, `(?m)` at the start: flags (`(?m)` as Postgres' `(?w)`).
 * - `\x{…}`: `\U` with eight digits.
 * Only literal patterns are rewritten; a pattern from a parameter or a column is handed to Postgres.
 */

export class RegexError extends Error {}

export interface Translated {
  readonly pattern: string;
  /** Capturing groups: REGEXP_EXTRACT answers the group when there is one, and refuses more. */
  readonly groups: number;
}

const CLASS_ESCAPES: Readonly<Record<string, { outside: string; inside?: string }>> = {
  d: { outside: '[0-9]', inside: '0-9' },
  D: { outside: '[^0-9]' },
  s: { outside: '[\\t\\n\\f\\r ]', inside: '\\t\\n\\f\\r ' },
  S: { outside: '[^\\t\\n\\f\\r ]' },
  w: { outside: '[0-9A-Za-z_]', inside: '0-9A-Za-z_' },
  W: { outside: '[^0-9A-Za-z_]' },
};
/** Escapes that mean the same in both (character entries and anchors). */
const SAME_ESCAPES = new Set(['a', 'f', 'n', 'r', 't', 'v', 'A']);

export function re2ToPostgres(re2: string): Translated {
  let i = 0;
  let out = '';
  let dotAll = false;
  let multiLine = false;
  let groups = 0;
  // Leading flags: `(?i)`, `(?s)`, `(?ms)`…
  const flags = /^\(\?([imsU]+)\)/.exec(re2);
  let prefix = '';
  if (flags) {
    for (const f of flags[1]) {
      if (f === 'i') prefix += 'i';
      else if (f === 's') dotAll = true;
      else if (f === 'm') multiLine = true;
      else throw new RegexError(`the flag (?${f}) is not supported`);
    }
    i = flags[0].length;
  }
  if (multiLine) prefix += 'w';
  const n = re2.length;
  while (i < n) {
    const c = re2[i];
    if (c === '\\') {
      const [text, length] = escape(re2, i, false);
      out += text;
      i += length;
    } else if (c === '[') {
      const [text, length] = bracket(re2, i);
      out += text;
      i += length;
    } else if (c === '.') {
      out += dotAll ? '.' : '[^\\n]';
      i++;
    } else if (c === '(') {
      if (re2[i + 1] !== '?') {
        groups++;
        out += '(';
        i++;
        continue;
      }
      const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(re2.slice(i));
      if (named) {
        groups++;
        out += '(';
        i += named[0].length;
      } else if (re2[i + 2] === ':') {
        out += '(?:';
        i += 3;
      } else if (/^[=!<]/.test(re2[i + 2] ?? '')) {
        throw new RegexError('look-ahead and look-behind are not supported by BigQuery regular expressions (RE2)');
      } else {
        throw new RegexError('flags are supported only at the start of a regular expression, as (?i), (?s) or (?m)');
      }
    } else if (c === '{') {
      const repeat = /^\{[0-9]+(,[0-9]*)?\}/.exec(re2.slice(i));
      const literal = !repeat || out === '';
      out += literal ? '\\{' : repeat[0];
      i += literal ? 1 : repeat[0].length;
    } else if (c === '}') {
      out += '\\}';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { pattern: prefix ? `(?${prefix})${out}` : out, groups };
}

/** An escape at `i`: its Postgres text and how many characters of the RE2 pattern it takes. */
function escape(re2: string, i: number, inBracket: boolean): [string, number] {
  const e = re2[i + 1];
  if (e === undefined) throw new RegexError('a regular expression cannot end with a backslash');
  const cls = CLASS_ESCAPES[e];
  if (cls) {
    if (!inBracket) return [cls.outside, 2];
    if (cls.inside === undefined) throw new RegexError(`\\${e} inside [...] is not supported`);
    return [cls.inside, 2];
  }
  if (SAME_ESCAPES.has(e)) return [`\\${e}`, 2];
  if (!inBracket && (e === 'b' || e === 'B')) return [e === 'b' ? '\\y' : '\\Y', 2];
  if (!inBracket && e === 'z') return ['\\Z', 2];
  if (e === 'x') {
    const braced = /^\\x\{([0-9A-Fa-f]{1,6})\}/.exec(re2.slice(i));
    if (braced) return [`\\U${braced[1].padStart(8, '0')}`, braced[0].length];
    const two = /^\\x([0-9A-Fa-f]{2})/.exec(re2.slice(i));
    if (two) return [`\\x${two[1]}`, 4];
    throw new RegexError('invalid \\x escape');
  }
  if (e === 'Q' && !inBracket) {
    const end = re2.indexOf('\\E', i + 2);
    const quoted = re2.slice(i + 2, end < 0 ? undefined : end);
    return [quoted.replace(/[\\^$.|?*+()[\]{}-]/g, (ch) => `\\${ch}`), end < 0 ? re2.length - i : end + 2 - i];
  }
  if (e === 'p' || e === 'P') throw new RegexError(`Unicode classes (\\${e}) are not supported`);
  if (/[0-9]/.test(e)) throw new RegexError('back references are not supported by BigQuery regular expressions (RE2)');
  if (/[A-Za-z]/.test(e)) throw new RegexError(`the escape \\${e} is not supported`);
  // An escaped punctuation character is that character in both.
  return [`\\${e}`, 2];
}

/** A bracket expression at `i`, up to its closing `]`. */
function bracket(re2: string, i: number): [string, number] {
  let k = i + 1;
  let out = '[';
  if (re2[k] === '^') {
    out += '^';
    k++;
  }
  // One item: a character (possibly escaped), a class like [:alpha:], or a class escape.
  let first = true;
  /** Whether the last item can start a range (a single character, not a class or a completed range). */
  let rangeStart = false;
  while (k < re2.length) {
    const c = re2[k];
    if (c === ']' && !first) return [`${out}]`, k + 1 - i];
    first = false;
    if (c === '[' && re2[k + 1] === ':') {
      const end = re2.indexOf(':]', k + 2);
      if (end < 0) throw new RegexError('unterminated [: class');
      out += re2.slice(k, end + 2);
      k = end + 2;
      rangeStart = false;
      continue;
    }
    if (c === '-') {
      const next = re2[k + 1];
      if (rangeStart && next !== undefined && next !== ']') {
        // A range: the end character (possibly escaped).
        const [end, length] = next === '\\' ? escape(re2, k + 1, true) : [next === '[' ? '\\[' : next, 1];
        out += `-${end}`;
        k += 1 + length;
        rangeStart = false;
        continue;
      }
      out += '\\-';
      k++;
      rangeStart = false;
      continue;
    }
    if (c === '\\') {
      const [text, length] = escape(re2, k, true);
      out += text;
      rangeStart = length === 2 && !CLASS_ESCAPES[re2[k + 1]];
      k += length;
      continue;
    }
    out += c === '[' ? '\\[' : c;
    rangeStart = true;
    k++;
  }
  throw new RegexError('missing ] in a regular expression');
}

/** BigQuery's REGEXP_REPLACE replacement (`\1`, `\0` for the match) in Postgres' (`\1`, `\&`). */
export function re2Replacement(replacement: string): string {
  return replacement.replace(/\\(.)/g, (_, c: string) => {
    if (c === '0') return '\\&';
    if (/[1-9\\]/.test(c)) return `\\${c}`;
    throw new RegexError(`invalid escape \\${c} in a REGEXP_REPLACE replacement (use \\\\ for a backslash)`);
  });
}
