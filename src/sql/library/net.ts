/**
 * BigQuery's NET functions (its reference, "Net functions"), called with their dotted names
 * (`NET.HOST(url)`). SQL functions of migrations: NET.HOST, NET.PUBLIC_SUFFIX and NET.REG_DOMAIN
 * of migrations/1764810002000_public-suffix-list.js (which loads the Public Suffix List), the IP
 * address functions of migrations/1764810001000_bigquery-net-ip-functions.js. Addresses are BYTES
 * in network byte order (4 bytes for IPv4, 16 for IPv6); a value BigQuery refuses at run time (a
 * malformed address, a length other than 4 or 16, a prefix out of range) is BigQuery's error there,
 * and a literal argument that can only fail is a 400 here.
 */
import { SqlSyntaxError } from '../errors.js';
import type { CallSite, FunctionDef } from '../functions.js';
import { pg, type PgExpr } from '../postgres/ast.js';
import { PARTIAL_STRICT, TOTAL_STRICT } from '../postgres/facts.js';
import { BYTES, INT64, STRING, typed } from '../types.js';
import { def, defWith, fn, int64Arg, stringArg } from './define.js';
import { onlyBytes } from './hash.js';

/** An INT64 argument that, when a literal, must be one of `allowed` (BigQuery's error, given before anything runs). */
function checkedInt64(s: CallSite, i: number, allowed: (n: number) => boolean, what: string): PgExpr {
  const n = s.integerLiteral(i);
  if (n !== undefined && !allowed(n))
    throw new SqlSyntaxError(`${s.call.name.toUpperCase()}: ${what}, not ${n}`, s.text, s.call.args[i].pos);
  return int64Arg(s, i);
}

const prefix = (s: CallSite, i: number, bytes?: number): PgExpr =>
  checkedInt64(s, i, (n) => n >= 0 && n <= 8 * (bytes ?? 16), `the prefix length must be 0 to ${8 * (bytes ?? 16)}`);

const ipFromStringOrNull = (s: CallSite) => typed(pg.func('logs.bq_ip_from_string_or_null', [stringArg(s, 0)]), BYTES);

export const NET_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  'net.host': defWith(
    def(1, 1, { 'logs.bq_net_host': TOTAL_STRICT }, (s) => fn('logs.bq_net_host', [stringArg(s, 0)], STRING)),
    { safe: 'same' },
  ),
  // Read from a table (the Public Suffix List): STABLE, which the catalogue's facts allow.
  'net.public_suffix': defWith(
    def(1, 1, { 'logs.bq_net_public_suffix': TOTAL_STRICT }, (s) => fn('logs.bq_net_public_suffix', [stringArg(s, 0)], STRING)),
    { safe: 'same' },
  ),
  'net.reg_domain': defWith(
    def(1, 1, { 'logs.bq_net_reg_domain': TOTAL_STRICT }, (s) => fn('logs.bq_net_reg_domain', [stringArg(s, 0)], STRING)),
    { safe: 'same' },
  ),
  'net.ip_from_string': defWith(
    def(1, 1, { 'logs.bq_ip_from_string': PARTIAL_STRICT }, (s) => typed(pg.func('logs.bq_ip_from_string', [stringArg(s, 0)]), BYTES)),
    { safe: ipFromStringOrNull },
  ),
  'net.safe_ip_from_string': defWith(def(1, 1, { 'logs.bq_ip_from_string_or_null': TOTAL_STRICT }, ipFromStringOrNull), {
    safe: 'same',
  }),
  'net.ip_to_string': def(1, 1, { 'logs.bq_ip_to_string': PARTIAL_STRICT }, (s) => fn('logs.bq_ip_to_string', [onlyBytes(s, 0)], STRING)),
  'net.ip_net_mask': def(2, 2, { 'logs.bq_ip_net_mask': PARTIAL_STRICT }, (s) => {
    const bytes = checkedInt64(s, 0, (n) => n === 4 || n === 16, 'the number of bytes must be 4 or 16');
    return typed(pg.func('logs.bq_ip_net_mask', [bytes, prefix(s, 1, s.integerLiteral(0))]), BYTES);
  }),
  'net.ip_trunc': def(2, 2, { 'logs.bq_ip_trunc': PARTIAL_STRICT }, (s) =>
    typed(pg.func('logs.bq_ip_trunc', [onlyBytes(s, 0), prefix(s, 1)]), BYTES),
  ),
  'net.ipv4_from_int64': def(1, 1, { 'logs.bq_ipv4_from_int64': PARTIAL_STRICT }, (s) => {
    const v = checkedInt64(s, 0, (n) => n >= -0x80000000 && n <= 0xffffffff, 'an IPv4 address is -0x80000000 to 0xFFFFFFFF');
    return typed(pg.func('logs.bq_ipv4_from_int64', [v]), BYTES);
  }),
  'net.ipv4_to_int64': def(1, 1, { 'logs.bq_ipv4_to_int64': PARTIAL_STRICT }, (s) => fn('logs.bq_ipv4_to_int64', [onlyBytes(s, 0)], INT64)),
};
