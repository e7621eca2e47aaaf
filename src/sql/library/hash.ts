/**
 * BigQuery's hash functions and the BYTES ↔ STRING encodings (its reference, "Hash functions" and
 * "String functions"). BYTES are Postgres `bytea`; a STRING hashed is its UTF-8 bytes, as in
 * BigQuery. Results are BYTES, sent as base64 (docs/API.md, "Row encoding"); `TO_HEX(SHA256(x))`
 * gives the usual hexadecimal digest. SHA1, FARM_FINGERPRINT, base32, CODE_POINTS_TO_BYTES and
 * SAFE_CONVERT_BYTES_TO_STRING are functions of migrations/1764810000000_bigquery-bytes-hash-functions.js
 * (Postgres has SHA-1 only in pgcrypto, which is not everywhere, and no FarmHash).
 */
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT, TOTAL_STRICT } from '../postgres/facts.js';
import { BYTES, INT64, STRING, isScalar, typed } from '../types.js';
import { SqlSyntaxError } from '../errors.js';
import { def, fn, safeWhereTotal, stringArg, wrongType } from './define.js';

/** The i-th argument as bytes: BYTES as they are, a STRING (or untyped value) as its UTF-8 bytes. */
export function bytesArg(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if (isScalar(v.type, 'BYTES')) return v.sql;
  if (isScalar(v.type, 'STRING', 'NULL') || v.param) return pg.func('convert_to', [v.sql, pg.literal('UTF8')]);
  return wrongType(s, i, 'STRING or BYTES');
}

/** The i-th argument, which must be BYTES (TO_HEX, TO_BASE64 take no STRING in BigQuery). */
export function onlyBytes(s: CallSite, i: number): PgExpr {
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
  sha1: def(1, 1, { 'logs.bq_sha1': TOTAL_STRICT, convert_to: TOTAL_STRICT }, (s) =>
    typed(pg.func('logs.bq_sha1', [bytesArg(s, 0)]), BYTES),
  ),
  // FarmHash's Fingerprint64 of the bytes (a STRING's UTF-8), as a signed INT64.
  farm_fingerprint: def(1, 1, { 'logs.bq_farm_fingerprint': TOTAL_STRICT, convert_to: TOTAL_STRICT }, (s) =>
    fn('logs.bq_farm_fingerprint', [bytesArg(s, 0)], INT64),
  ),
  to_base32: def(1, 1, { 'logs.bq_to_base32': TOTAL_STRICT }, (s) => fn('logs.bq_to_base32', [onlyBytes(s, 0)], STRING)),
  from_base32: def(1, 1, { 'logs.bq_from_base32': PARTIAL_STRICT }, (s) => typed(pg.func('logs.bq_from_base32', [stringArg(s, 0)]), BYTES)),
  // Invalid UTF-8 becomes U+FFFD, so it cannot fail (CAST(bytes AS STRING) fails instead).
  safe_convert_bytes_to_string: def(1, 1, { 'logs.bq_safe_bytes_to_string': TOTAL_STRICT }, (s) =>
    fn('logs.bq_safe_bytes_to_string', [onlyBytes(s, 0)], STRING),
  ),
  // Each element a byte 0–255 (an error otherwise); NULL when an element is NULL.
  code_points_to_bytes: def(1, 1, { 'logs.bq_code_points_to_bytes': PARTIAL_STRICT }, (s) =>
    typed(pg.func('logs.bq_code_points_to_bytes', [int64Array(s, 0)]), BYTES),
  ),
});

/** The i-th argument, which must be an ARRAY<INT64> (or NULL). */
function int64Array(s: CallSite, i: number): PgExpr {
  const v = s.arg(i);
  if ((v.type.kind === 'array' && isScalar(v.type.element, 'INT64')) || isScalar(v.type, 'NULL')) return v.sql;
  throw new SqlSyntaxError(`${s.call.name.toUpperCase()} takes ARRAY<INT64> as argument ${i + 1}`, s.text, s.call.args[i].pos);
}
