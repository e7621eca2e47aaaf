/** Hostile inputs of issue 25, shared by the tests of each fix and the hostile tester's replay (test/hardening/hostile-tester.test.ts). */

/** `c0 … c<levels>`, each level reading its input column twice: 2^levels nodes once inlined. */
export function doublingCteChain(levels: number): string {
  const ctes = [`c0 as (select 'a' as s)`];
  for (let i = 1; i <= levels; i++) ctes.push(`c${i} as (select concat(s, s) as s from c${i - 1})`);
  return `with ${ctes.join(', ')} select length(s) as n from c${levels}`;
}

/** The same doubling through nested subqueries in FROM. */
export function doublingSubqueryChain(levels: number): string {
  let from = `(select 'a' as s)`;
  for (let i = 1; i <= levels; i++) from = `(select concat(s, s) as s from ${from} as q${i})`;
  return `select length(s) as n from ${from} as top`;
}

/** A protobuf varint. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return out;
}
const field = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag, ...varint(content.length)]), content]);

/** An ExportLogsServiceRequest of one resource and one scope holding `records` (each LogRecord bytes). */
export function otlpRequest(records: Buffer[]): Buffer {
  const scopeLogs = Buffer.concat(records.map((r) => field(0x12, r))); // ScopeLogs.log_records = 2
  return field(0x0a, field(0x12, scopeLogs)); // request.resource_logs = 1, ResourceLogs.scope_logs = 2
}

/** A LogRecord whose body is an arrayValue nested `depth` deep (AnyValue.array_value = 5, ArrayValue.values = 1). */
export function deeplyNestedRecord(depth: number): Buffer {
  // Written outside in: only headers precede the innermost empty AnyValue, so the lengths are computed first.
  const anyLengths = [0];
  for (let i = 0; i < depth; i++) {
    const inner = anyLengths[i];
    const array = 1 + varint(inner).length + inner;
    anyLengths.push(1 + varint(array).length + array);
  }
  const bytes: number[] = [0x2a, ...varint(anyLengths[depth])]; // LogRecord.body = 5
  for (let i = depth; i > 0; i--) {
    const inner = anyLengths[i - 1];
    const array = 1 + varint(inner).length + inner;
    bytes.push(0x2a, ...varint(array), 0x0a, ...varint(inner));
  }
  return Buffer.from(bytes);
}

/** `levels` SELECTs joined by UNION ALL, the i-th answering `x = i`. */
export function unionSelects(levels: number): string {
  return Array.from({ length: levels }, (_, i) => `select ${i} as x`).join(' union all ');
}

/** `with c0 as (<first>), c1 as (select x from c0), … select x from c<levels - 1>`: each CTE reads the one before. */
export function chainedCtes(levels: number, name = 'c', first = 'select 1 as x'): string {
  const ctes = [`${name}0 as (${first})`];
  for (let i = 1; i < levels; i++) ctes.push(`${name}${i} as (select x from ${name}${i - 1})`);
  return `with ${ctes.join(', ')} select x from ${name}${levels - 1}`;
}
