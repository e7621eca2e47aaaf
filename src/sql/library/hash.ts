/**
 * BigQuery's hash functions and the BYTES ↔ STRING encodings (its reference, "Hash functions" and
 * "String functions"). BYTES are Postgres `bytea`; a STRING hashed is its UTF-8 bytes, as in
 * BigQuery. Results are BYTES, sent as base64 (docs/API.md, "Row encoding"); `TO_HEX(SHA256(x))`
 * gives the usual hexadecimal digest.
 */
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT, TOTAL_STRICT } from '../postgres/facts.js';
import { BYTES, STRING, isScalar, typed } from '../types.js';
import { def, fn, safeWhereTotal, stringArg, wrongType } from './define.js';

/** The i-th argument as bytes: BYTES as they are, a STRING (or untyped value) as its UTF-8 bytes. */
export function bytesArg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'BYTES')) return v.sql;
  if (isScalar(v.type, 'STRING', 'NULL') || v.param) return pg.func('convert_to', [v.sql, pg.literal('UTF8')]);
  return wrongType(s, i, 'STRING or BYTES');
}

/** The i-th argument, which must be BYTES (TO_HEX, TO_BASE64 take no STRING in BigQuery). */
function onlyBytes(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'BYTES', 'NULL')) return v.sql;
  return wrongType(s, i, 'BYTES');
}

const digest = (pgName: 'sha256' | 'sha512'): FunctionDef =>
  def(1, 1, { [pgName]: TOTAL_STRICT, convert_to: TOTAL_STRICT }, (s) => typed(pg.func(pgName, [bytesArg(s, 0)]), BYTES));

export const HASH_FUNCTIONS: Readonly<Record<string, FunctionDef>> = safeWhereTotal({
  // Postgres' md5() answers hexadecimal text; BigQuery's MD5 the 16 bytes.
  md5: def(1, 1, { md5: TOTAL_STRICT, decode: PARTIAL_STRICT, convert_to: TOTAL_STRICT }, (s) =>
    typed(pg.func('decode', [pg.func('md5', [bytesArg(s, 0)]), pg.literal('hex')]), BYTES),
  ),
  sha256: digest('sha256'),
  sha512: digest('sha512'),
  to_hex: def(1, 1, { encode: TOTAL_STRICT }, (s) => fn('encode', [onlyBytes(s, 0), pg.literal('hex')], STRING)),
  // An odd number of digits reads as if a 0 led them (FROM_HEX('0AF') is 0x00AF); other characters are an error.
  from_hex: def(1, 1, { decode: PARTIAL_STRICT, length: TOTAL_STRICT }, (s) => {
    const hex = stringArg(s, 0);
    const even = pg.case(
      [
        {
          when: pg.op('=', pg.func('mod', [pg.func('length', [hex]), pg.number('2')]), pg.number('1')),
          then: pg.op('||', pg.literal('0'), hex),
        },
      ],
      hex,
    );
    return typed(pg.func('decode', [even, pg.literal('hex')]), BYTES);
  }),
  // Postgres breaks base64 into lines of 76 characters; BigQuery does not.
  to_base64: def(1, 1, { encode: TOTAL_STRICT, translate: TOTAL_STRICT }, (s) =>
    fn('translate', [pg.func('encode', [onlyBytes(s, 0), pg.literal('base64')]), pg.literal('\n'), pg.literal('')], STRING),
  ),
  from_base64: def(1, 1, { decode: PARTIAL_STRICT }, (s) => typed(pg.func('decode', [stringArg(s, 0), pg.literal('base64')]), BYTES)),
});
