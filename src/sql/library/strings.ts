/**
 * BigQuery's string functions (its reference, "String functions"): 1-based positions in
 * characters, INT64 results, NULL in gives NULL out, and BigQuery's errors for bad lengths and
 * positions. Where Postgres answers differently, the entry prints a function of the migration
 * migrations/1764100000000_bigquery-string-functions.js (`logs.bq_*`). Regular expressions are
 * RE2's, rewritten for Postgres by regex.ts.
 */
import { SqlUnsupportedError } from '../errors.js';
import type { CallSite, Emits, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL, PARTIAL_STRICT, SCALAR, TOTAL_STRICT } from '../postgres/facts.js';
import { BOOL, INT64, STRING, isScalar, typed, type BqType, type Typed } from '../types.js';
import { asText } from '../coerce.js';
import { containsLiteral, containsValue } from '../postgres/search.js';
import { args, def, defWith, fn, int64Arg, optional, safeWhereTotal, stringArg } from './define.js';
import { RegexError, re2Replacement, re2ToPostgres } from './regex.js';

const STRING_ARRAY: BqType = { kind: 'array', element: STRING };
const INT64_ARRAY: BqType = { kind: 'array', element: INT64 };

const REGEX_META = /[\\^$.|?*+()[\]{}]/;
/** REGEX_META as a Postgres regular expression (a bracket expression: `]` first, then the rest, the backslash escaped). */
const PG_REGEX_META = '[]\\\\^$.|?*+()[{}]';

/** BigQuery's INITCAP delimiters when none are given: whitespace and these. */
const INITCAP_DELIMITERS = ' \t\n\r\v\f[](){}/|\\<>!?@"^#$&~_,.:;*%+-';

// Facts of the migration's functions (logs.bq_*): strict, immutable; those that raise BigQuery's errors may fail.
const LENGTH_ARG = { 'logs.bq_length_arg': PARTIAL_STRICT, 'logs.bq_length_or_null': TOTAL_STRICT };

/** A length or count argument: negative is BigQuery's error, or NULL (and so the result) in the `SAFE.` form. */
function lengthArg(s: CallSite, i: number, safe: boolean): PgExpr {
  return pg.func(safe ? 'logs.bq_length_or_null' : 'logs.bq_length_arg', [int64Arg(s, i)]);
}

/** An entry whose only errors are negative lengths: its `SAFE.` form is the same with NULL for them. */
function withLengths(min: number, max: number, emits: Emits, build: (s: CallSite, safe: boolean) => Typed): FunctionDef {
  return defWith(
    def(min, max, { ...emits, ...LENGTH_ARG }, (s) => build(s, false)),
    { safe: (s) => build(s, true) },
  );
}

/** A regular-expression argument: a literal is rewritten from RE2 (regex.ts); anything else goes to Postgres as it is. */
interface Pattern {
  readonly sql: PgExpr;
  /** Capturing groups of a literal pattern; undefined for a parameter or a column. */
  readonly groups?: number;
  readonly literal?: string;
}

export function regexArg(s: CallSite, i: number): Pattern {
  const literal = s.stringLiteral(i);
  if (literal === undefined) return { sql: stringArg(s, i) };
  try {
    const { pattern, groups } = re2ToPostgres(literal);
    return { sql: pg.literal(pattern), groups, literal };
  } catch (e) {
    if (e instanceof RegexError) throw new SqlUnsupportedError(`invalid regular expression: ${e.message}`, s.text, s.call.args[i].pos);
    throw e;
  }
}

/** REGEXP_EXTRACT and REGEXP_INSTR refuse a pattern with more than one capturing group, as BigQuery does. */
function oneGroup(s: CallSite, p: Pattern): number {
  if (p.groups !== undefined && p.groups > 1)
    throw new SqlUnsupportedError(
      `${s.call.name.toUpperCase()}: the regular expression may have at most one capturing group`,
      s.text,
      s.call.args[1].pos,
    );
  return p.groups ?? 0;
}

function needsLiteral(s: CallSite, p: Pattern): void {
  if (p.groups === undefined)
    throw new SqlUnsupportedError(
      `${s.call.name.toUpperCase()} with a position or occurrence needs a literal regular expression`,
      s.text,
      s.call.args[1].pos,
    );
}

const regexpExtract = def(2, 4, { substring: PARTIAL_STRICT, regexp_substr: PARTIAL_STRICT }, (s) => {
  const text = stringArg(s, 0);
  const p = regexArg(s, 1);
  const groups = oneGroup(s, p);
  // substring(text, pattern) returns the first capture group, or the whole match without one: BigQuery's rule.
  if (s.call.args.length === 2) return fn('substring', [text, p.sql], STRING);
  needsLiteral(s, p);
  const position = pg.cast(int64Arg(s, 2), 'integer');
  const occurrence = pg.cast(optional(s, 3, int64Arg, pg.number('1')), 'integer');
  return fn('regexp_substr', [text, p.sql, position, occurrence, pg.literal(''), pg.number(String(groups))], STRING);
});

/** TRIM / LTRIM / RTRIM: whitespace, or the characters of the second argument. */
function trimming(pgName: 'btrim' | 'ltrim' | 'rtrim'): FunctionDef {
  return def(1, 2, { [pgName]: TOTAL_STRICT }, (s) =>
    fn(
      pgName,
      args(s).map((_, i) => stringArg(s, i)),
      STRING,
    ),
  );
}

/** The longest result REPEAT, LPAD and RPAD may build (logs.bq_repeat, logs.bq_pad): one call must not exhaust memory. */
const MAX_RESULT = 1_048_576;

/** A literal length over MAX_RESULT is refused here; a computed one, when the function runs. */
function capped(s: CallSite, i: number, times = 1): void {
  const n = s.integerLiteral(i);
  if (n !== undefined && n * times > MAX_RESULT)
    throw new SqlUnsupportedError(
      `${s.call.name.toUpperCase()}: a result longer than ${MAX_RESULT} characters is not allowed`,
      s.text,
      s.call.args[i].pos,
    );
}

/** LPAD / RPAD: the pattern defaults to a space; a negative length or an empty pattern is BigQuery's error. */
function padding(leading: boolean): FunctionDef {
  return withLengths(2, 3, { 'logs.bq_pad': PARTIAL_STRICT }, (s, safe) => {
    capped(s, 1);
    const pattern = s.call.args.length > 2 ? stringArg(s, 2) : pg.literal(' ');
    return fn('logs.bq_pad', [stringArg(s, 0), lengthArg(s, 1, safe), pattern, pg.literal(leading)], STRING);
  });
}

/** SUBSTR(value, position[, length]): negative positions count from the end, 0 is 1 (logs.bq_substr). */
const substr = withLengths(2, 3, { 'logs.bq_substr': PARTIAL_STRICT, substr: PARTIAL_STRICT }, (s, safe) => {
  const from = pg.func('logs.bq_substr', [stringArg(s, 0), int64Arg(s, 1)]);
  if (s.call.args.length < 3) return typed(from, STRING);
  return fn('substr', [from, pg.number('1'), lengthArg(s, 2, safe)], STRING);
});

/** INSTR(source, search[, position[, occurrence]]): a negative position searches backwards from the end. */
function instr(s: CallSite): Typed {
  const at = (i: number): PgExpr => optional(s, i, int64Arg, pg.number('1'));
  return fn('logs.bq_instr', [stringArg(s, 0), stringArg(s, 1), at(2), at(3)], INT64);
}

/** BYTE_LENGTH / OCTET_LENGTH: the bytes of BYTES, or of a STRING's UTF-8 text. */
const byteLength = def(1, 1, { octet_length: TOTAL_STRICT }, (s) => {
  const v = s.arg(0);
  return typed(pg.cast(pg.func('octet_length', [isScalar(v.type, 'BYTES') ? v.sql : stringArg(s, 0)]), 'bigint'), INT64);
});

const strpos = def(2, 2, { strpos: TOTAL_STRICT }, (s) =>
  typed(pg.cast(pg.func('strpos', [stringArg(s, 0), stringArg(s, 1)]), 'bigint'), INT64),
);

/** CHAR_LENGTH and friends: characters; BYTE_LENGTH: bytes of the UTF-8 text. */
const length = (pgName: string): FunctionDef =>
  def(1, 1, { [pgName]: TOTAL_STRICT }, (s) => typed(pg.cast(pg.func(pgName, [stringArg(s, 0)]), 'bigint'), INT64));

export const STRING_FUNCTIONS: Readonly<Record<string, FunctionDef>> = safeWhereTotal({
  regexp_contains: defWith(
    def(2, 2, { replace: TOTAL_STRICT }, (s) => {
      const text = stringArg(s, 0);
      const pattern = regexArg(s, 1);
      // A pattern without metacharacters is a plain containment test: cheaper than a regex, and
      // printed as LIKE '%…%' so a trigram index serves it (src/sql/postgres/search.ts).
      if (pattern.literal !== undefined)
        return typed(REGEX_META.test(pattern.literal) ? pg.op('~', text, pattern.sql) : containsLiteral(text, pattern.literal), BOOL);
      if (!s.arg(1).param) return typed(pg.op('~', text, pattern.sql), BOOL);
      // A parameter (`regexp_contains(url, @project)`): the same choice, made by Postgres when it plans. Queries run as
      // unnamed statements, so the planner sees the value, evaluates the test once and keeps one branch
      // (docs/ARCHITECTURE.md, "Plain texts: a containment test, not a regex").
      return typed(
        pg.case(
          [{ when: pg.op('~', pattern.sql, pg.literal(PG_REGEX_META)), then: pg.op('~', text, pattern.sql) }],
          containsValue(text, pattern.sql),
        ),
        BOOL,
      );
    }),
    { safe: 'same' },
  ),
  regexp_extract: regexpExtract,
  regexp_substr: regexpExtract,
  regexp_extract_all: def(2, 2, { 'logs.bq_regexp_extract_all': PARTIAL_STRICT }, (s) => {
    const p = regexArg(s, 1);
    oneGroup(s, p);
    return typed(pg.func('logs.bq_regexp_extract_all', [stringArg(s, 0), p.sql]), STRING_ARRAY);
  }),
  regexp_instr: def(2, 5, { regexp_instr: PARTIAL_STRICT }, (s) => {
    const p = regexArg(s, 1);
    const groups = oneGroup(s, p);
    if (s.call.args.length > 2) needsLiteral(s, p);
    // An empty regular expression is found nowhere (0), where Postgres finds it at 1.
    if (p.literal === '') return typed(pg.cast(pg.number('0'), 'bigint'), INT64);
    const at = (i: number, otherwise: string): PgExpr => pg.cast(optional(s, i, int64Arg, pg.number(otherwise)), 'integer');
    const call = pg.func('regexp_instr', [
      stringArg(s, 0),
      p.sql,
      at(2, '1'),
      at(3, '1'),
      at(4, '0'),
      pg.literal(''),
      pg.number(String(groups)),
    ]);
    return typed(pg.cast(call, 'bigint'), INT64);
  }),
  regexp_replace: def(3, 3, { regexp_replace: PARTIAL }, (s) => {
    const literal = s.stringLiteral(2);
    let replacement = stringArg(s, 2);
    if (literal !== undefined) {
      try {
        replacement = pg.literal(re2Replacement(literal));
      } catch (e) {
        if (e instanceof RegexError) throw new SqlUnsupportedError(e.message, s.text, s.call.args[2].pos);
        throw e;
      }
    }
    return fn('regexp_replace', [stringArg(s, 0), regexArg(s, 1).sql, replacement, pg.literal('g')], STRING);
  }),
  starts_with: def(2, 2, { starts_with: TOTAL_STRICT }, (s) => fn('starts_with', [stringArg(s, 0), stringArg(s, 1)], BOOL)),
  ends_with: def(2, 2, { right: PARTIAL_STRICT, length: TOTAL_STRICT }, (s) => {
    const suffix = stringArg(s, 1);
    return typed(pg.op('=', pg.func('right', [stringArg(s, 0), pg.func('length', [suffix])]), suffix), BOOL);
  }),
  // `||` is NULL when any operand is NULL, like BigQuery's CONCAT (Postgres' concat() skips NULLs).
  concat: def(1, 100, {}, (s) =>
    typed(
      args(s)
        .map(asText)
        .reduce((a, b) => pg.op('||', a, b)),
      STRING,
    ),
  ),
  lower: def(1, 1, { lower: TOTAL_STRICT }, (s) => fn('lower', [stringArg(s, 0)], STRING)),
  upper: def(1, 1, { upper: TOTAL_STRICT }, (s) => fn('upper', [stringArg(s, 0)], STRING)),
  length: length('length'),
  char_length: length('char_length'),
  character_length: length('char_length'),
  byte_length: byteLength,
  octet_length: byteLength,
  trim: trimming('btrim'),
  ltrim: trimming('ltrim'),
  rtrim: trimming('rtrim'),
  lpad: padding(true),
  rpad: padding(false),
  replace: def(3, 3, { replace: TOTAL_STRICT }, (s) => fn('replace', [stringArg(s, 0), stringArg(s, 1), stringArg(s, 2)], STRING)),
  substr,
  substring: substr,
  // LEFT / RIGHT: from the start or the end; a negative length is an error, where Postgres would drop characters.
  left: withLengths(2, 2, { substr: PARTIAL_STRICT }, (s, safe) =>
    fn('substr', [stringArg(s, 0), pg.number('1'), lengthArg(s, 1, safe)], STRING),
  ),
  right: withLengths(2, 2, { right: PARTIAL_STRICT }, (s, safe) => fn('right', [stringArg(s, 0), lengthArg(s, 1, safe)], STRING)),
  repeat: withLengths(2, 2, { 'logs.bq_repeat': PARTIAL_STRICT }, (s, safe) => {
    capped(s, 1, Math.max(s.stringLiteral(0)?.length ?? 1, 1));
    return fn('logs.bq_repeat', [stringArg(s, 0), lengthArg(s, 1, safe)], STRING);
  }),
  reverse: def(1, 1, { reverse: TOTAL_STRICT }, (s) => fn('reverse', [stringArg(s, 0)], STRING)),
  strpos,
  // INSTR(source, search[, position[, occurrence]]): a negative position searches backwards from the end.
  instr: defWith(
    def(2, 4, { 'logs.bq_instr': PARTIAL_STRICT }, (s) => instr(s)),
    {
      safe: (s) => {
        // Position 0 and occurrences below 1 are the errors.
        const bad = pg.or(
          pg.op('=', optional(s, 2, int64Arg, pg.number('1')), pg.number('0')),
          pg.op('<', optional(s, 3, int64Arg, pg.number('1')), pg.number('1')),
        );
        return typed(pg.case([{ when: bad, then: pg.literal(null) }], instr(s).sql), INT64);
      },
    },
  ),
  // SPLIT('', d) is [''], an empty delimiter splits into characters (logs.bq_split); the delimiter defaults to a comma.
  split: def(1, 2, { 'logs.bq_split': TOTAL_STRICT }, (s) =>
    typed(pg.func('logs.bq_split', [stringArg(s, 0), optional(s, 1, stringArg, pg.literal(','))]), STRING_ARRAY),
  ),
  ascii: def(1, 1, { ascii: TOTAL_STRICT }, (s) => typed(pg.cast(pg.func('ascii', [stringArg(s, 0)]), 'bigint'), INT64)),
  // The code point of the first character (Postgres' ascii() gives it for UTF-8 text); 0 for ''.
  unicode: def(1, 1, { ascii: TOTAL_STRICT }, (s) => typed(pg.cast(pg.func('ascii', [stringArg(s, 0)]), 'bigint'), INT64)),
  chr: defWith(
    def(1, 1, { 'logs.bq_chr': PARTIAL_STRICT }, (s) => fn('logs.bq_chr', [int64Arg(s, 0)], STRING)),
    {
      safe: (s) => {
        const c = int64Arg(s, 0);
        const valid = pg.or(
          pg.and(pg.op('>=', c, pg.number('0')), pg.op('<=', c, pg.number('55295'))),
          pg.and(pg.op('>=', c, pg.number('57344')), pg.op('<=', c, pg.number('1114111'))),
        );
        return typed(pg.case([{ when: valid, then: pg.func('logs.bq_chr', [c]) }]), STRING);
      },
    },
  ),
  // Of a STRING its code points, of BYTES the byte values (logs.bq_bytes_to_code_points).
  to_code_points: def(1, 1, { 'logs.bq_to_code_points': TOTAL_STRICT, 'logs.bq_bytes_to_code_points': TOTAL_STRICT }, (s) =>
    isScalar(s.arg(0).type, 'BYTES')
      ? typed(pg.func('logs.bq_bytes_to_code_points', [s.arg(0).sql]), INT64_ARRAY)
      : typed(pg.func('logs.bq_to_code_points', [stringArg(s, 0)]), INT64_ARRAY),
  ),
  code_points_to_string: def(1, 1, { 'logs.bq_code_points_to_string': PARTIAL_STRICT }, (s) => {
    const v = s.arg(0);
    if (!(v.type.kind === 'array' && isScalar(v.type.element, 'INT64')) && !isScalar(v.type, 'NULL'))
      throw new SqlUnsupportedError('CODE_POINTS_TO_STRING takes an ARRAY<INT64>', s.text, s.call.args[0].pos);
    return fn('logs.bq_code_points_to_string', [v.sql], STRING);
  }),
  initcap: def(1, 2, { 'logs.bq_initcap': TOTAL_STRICT }, (s) =>
    fn('logs.bq_initcap', [stringArg(s, 0), optional(s, 1, stringArg, pg.literal(INITCAP_DELIMITERS))], STRING),
  ),
  soundex: def(1, 1, { 'logs.bq_soundex': TOTAL_STRICT }, (s) => fn('logs.bq_soundex', [stringArg(s, 0)], STRING)),
  translate: def(3, 3, { translate: TOTAL_STRICT }, (s) => fn('translate', [stringArg(s, 0), stringArg(s, 1), stringArg(s, 2)], STRING)),
  edit_distance: defWith(
    def(2, 3, { 'logs.bq_edit_distance': PARTIAL_STRICT }, (s) =>
      fn('logs.bq_edit_distance', [stringArg(s, 0), stringArg(s, 1), optional(s, 2, int64Arg, pg.number('9223372036854775807'))], INT64),
    ),
    { params: ['value1', 'value2', 'max_distance'] },
  ),
  normalize: def(1, 2, { 'logs.bq_normalize': TOTAL_STRICT }, (s) => fn('logs.bq_normalize', [stringArg(s, 0), normalForm(s)], STRING)),
  normalize_and_casefold: def(1, 2, { 'logs.bq_normalize': TOTAL_STRICT, lower: TOTAL_STRICT }, (s) =>
    fn('logs.bq_normalize', [pg.func('lower', [stringArg(s, 0)]), normalForm(s)], STRING),
  ),
  // Case-insensitive containment after NFKC normalisation, as BigQuery compares (of a STRING; not of a STRUCT or an ARRAY).
  contains_substr: def(2, 2, { strpos: TOTAL_STRICT, 'logs.bq_normalize': TOTAL_STRICT, lower: TOTAL_STRICT }, (s) => {
    if (s.arg(0).type.kind !== 'scalar')
      throw new SqlUnsupportedError('CONTAINS_SUBSTR of a STRUCT or an ARRAY is not supported; search a field', s.text, s.call.args[0].pos);
    const folded = (e: PgExpr): PgExpr => pg.func('lower', [pg.func('logs.bq_normalize', [e, pg.literal('NFKC')])]);
    const value = isScalar(s.arg(0).type, 'STRING') ? s.arg(0).sql : asText(s.arg(0));
    return typed(pg.op('>', pg.func('strpos', [folded(value), folded(stringArg(s, 1))]), pg.number('0')), BOOL);
  }),
  format: def(1, 100, { round: SCALAR, replace: TOTAL_STRICT }, (s) => formatCall(s)),
});

/** NORMALIZE's form: a bare word (NFC, NFKC, …), NFC when absent. */
function normalForm(s: CallSite): PgExpr {
  if (s.call.args.length < 2) return pg.literal('NFC');
  const form = s.word(1);
  if (!['NFC', 'NFD', 'NFKC', 'NFKD'].includes(form))
    throw new SqlUnsupportedError(`unknown normalization mode ${form} (NFC, NFD, NFKC or NFKD)`, s.text, s.call.args[1].pos);
  return pg.literal(form);
}

/**
 * FORMAT with a literal format string: `%s`, `%d` / `%i`, `%f` / `%.nf`, `%t`, `%%`; other
 * specifiers (widths, `%e`, `%g`, `%x`, `%T`, …) are refused.
 */
function formatCall(s: CallSite): Typed {
  const format = s.stringLiteral(0);
  if (format === undefined) throw new SqlUnsupportedError('the format of FORMAT must be a string literal', s.text, s.call.args[0].pos);
  const parts: PgExpr[] = [];
  let literal = '';
  let next = 1;
  const re = /%(?:\.(\d+))?([a-zA-Z%])/y;
  for (let k = 0; k < format.length;) {
    if (format[k] !== '%') {
      literal += format[k++];
      continue;
    }
    re.lastIndex = k;
    const m = re.exec(format);
    if (!m)
      throw new SqlUnsupportedError(`FORMAT: the specifier at "${format.slice(k, k + 4)}" is not supported`, s.text, s.call.args[0].pos);
    k = re.lastIndex;
    const [, precision, spec] = m;
    if (spec === '%') {
      literal += '%';
      continue;
    }
    if (next >= s.call.args.length) throw new SqlUnsupportedError('FORMAT has more specifiers than values', s.text, s.call.args[0].pos);
    const i = next++;
    const v = s.arg(i);
    let text: PgExpr;
    if ((spec === 'd' || spec === 'i') && precision === undefined) {
      if (!isScalar(v.type, 'INT64', 'NULL') && !v.param)
        throw new SqlUnsupportedError(`FORMAT %${spec} takes an INT64`, s.text, s.call.args[i].pos);
      text = pg.cast(v.sql, 'text');
    } else if (spec === 'f' || spec === 'F') {
      if (!isScalar(v.type, 'INT64', 'FLOAT64', 'NUMERIC', 'NULL') && !v.param)
        throw new SqlUnsupportedError(`FORMAT %${spec} takes a number`, s.text, s.call.args[i].pos);
      // numeric rounds half away from zero and keeps the scale it was rounded to: %.2f of 1.5 is 1.50.
      text = pg.cast(pg.func('round', [pg.cast(v.sql, 'numeric'), pg.number(precision ?? '6')]), 'text');
    } else if (spec === 'T' && precision === undefined) {
      // A literal of the value: strings quoted and escaped, NULL as NULL.
      if (v.type.kind !== 'scalar')
        throw new SqlUnsupportedError('FORMAT %T of a STRUCT or an ARRAY is not supported', s.text, s.call.args[i].pos);
      const quoted = (e: PgExpr): PgExpr =>
        pg.op(
          '||',
          pg.op(
            '||',
            pg.literal('"'),
            pg.func('replace', [pg.func('replace', [e, pg.literal('\\'), pg.literal('\\\\')]), pg.literal('"'), pg.literal('\\"')]),
          ),
          pg.literal('"'),
        );
      text = pg.func('coalesce', [isScalar(v.type, 'STRING') ? quoted(v.sql) : asText(v), pg.literal('NULL')]);
    } else if ((spec === 's' || spec === 't') && precision === undefined) {
      if (spec === 's' && v.type.kind !== 'scalar')
        throw new SqlUnsupportedError('FORMAT %s takes a scalar; use %t', s.text, s.call.args[i].pos);
      text = isScalar(v.type, 'STRING') ? v.sql : asText(v);
      // %t prints NULL as the word NULL; %s makes the whole result NULL.
      if (spec === 't') text = pg.func('coalesce', [text, pg.literal('NULL')]);
    } else {
      throw new SqlUnsupportedError(
        `FORMAT: the specifier %${precision ? `.${precision}` : ''}${spec} is not supported`,
        s.text,
        s.call.args[0].pos,
      );
    }
    if (literal) parts.push(pg.literal(literal));
    literal = '';
    parts.push(text);
  }
  if (next < s.call.args.length) throw new SqlUnsupportedError('FORMAT has more values than specifiers', s.text, s.call.args[next].pos);
  if (literal || !parts.length) parts.push(pg.literal(literal));
  return typed(
    parts.reduce((a, b) => pg.op('||', a, b)),
    STRING,
  );
}
