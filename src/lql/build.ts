/**
 * LQL rules → one query of the translator's syntax tree (src/sql/ast/), which the translator then
 * resolves, checks and prints like any endpoint SQL (src/sql/index.ts): LQL has no executor of
 * its own. Two targets:
 *
 * - a source (the console's search, `GET /api/sources/:x/events`): field paths are checked
 *   against the source's schema, values typed by it, and a field under a record is tested with
 *   `EXISTS (SELECT 1 FROM UNNEST(t.metadata) AS l1 … WHERE …)`: some element matches;
 * - a CTE of a sandboxable endpoint (`lql=`): paths are columns of the CTE, values typed as the
 *   original types them without a schema (integer, float, true/false, else text).
 *
 * Message terms print the forms a trigram index on event_message serves: a word or phrase is
 * `LIKE '%…%'` (with `%`, `_` and `\` escaped), a regex `~`; a regex without metacharacters is a
 * LIKE too (docs/LQL.md, "Speed").
 */
import type * as E from '../sql/ast/expressions.js';
import type * as F from '../sql/ast/from.js';
import type * as Q from '../sql/ast/queries.js';
import { FIXED_COLUMNS, type FieldSchema, type ScalarType, type SourceTable } from '../sources/schema.js';
import { LqlError } from './errors.js';
import * as n from './nodes.js';
import type { ChartRule, FilterRule, LqlRules, LqlValue, Moment, SelectRule } from './rules.js';

export type LqlTarget = { readonly kind: 'source'; readonly source: SourceTable } | { readonly kind: 'cte'; readonly name: string };

/** The events search's window and page (src/lql/search.ts); ignored for charts, except the window. */
export interface EventsWindow {
  /** ISO instants: `start` included, `end` excluded. */
  readonly start?: string;
  readonly end?: string;
  /** Rows strictly older than this (timestamp, id) pair: the previous page's last row. */
  readonly before?: { readonly timestamp: string; readonly id: string };
  readonly limit?: number;
  /** Only these events (live tail: the ones that just arrived). */
  readonly ids?: readonly string[];
  /** Oldest first (live tail). */
  readonly ascending?: boolean;
  /** Instead of rows: the count of matching events per bucket of this many seconds (a `c:` is ignored). */
  readonly histogramSeconds?: number;
}

export interface LqlQuery {
  readonly query: Q.Query;
  /** `chart` for a `c:` query and for a histogram: columns `timestamp` (the bucket) and `value`. */
  readonly shape: 'events' | 'chart';
}

const T = 't';
/** Regex metacharacters: a pattern without any is a plain containment test. */
const REGEX_META = /[\\^$.|?*+()[\]{}]/;

export function buildLqlQuery(rules: LqlRules, target: LqlTarget, window: EventsWindow = {}): LqlQuery {
  return new Builder(rules, target).build(window);
}

/** How a field path reads: the records to unnest on the way, then the leaf and its type. */
interface Access {
  /** Expression of the first record or of the leaf, from the table alias. */
  readonly records: readonly string[];
  readonly leaf: string;
  /** undefined when unknown (a CTE column). */
  readonly type?: ScalarType;
  readonly repeated: boolean;
  /** Every record on the way was always ingested from one object: its only element is the first. */
  readonly single: boolean;
}

class Builder {
  private aliases = 0;
  constructor(
    private readonly rules: LqlRules,
    private readonly target: LqlTarget,
  ) {}

  build(window: EventsWindow): LqlQuery {
    const pos = 0;
    const conditions = this.rules.filters.map((f) => this.filter(f));
    if (window.start) conditions.push(n.binary(pos, '>=', n.path(pos, T, 'timestamp'), n.timestamp(pos, window.start)));
    if (window.end) conditions.push(n.binary(pos, '<', n.path(pos, T, 'timestamp'), n.timestamp(pos, window.end)));
    if (window.ids)
      conditions.push({ kind: 'inList', pos, operand: n.path(pos, T, 'id'), list: window.ids.map((id) => n.str(pos, id)), negated: false });
    const from = n.table(pos, this.tableName(), T);
    if (window.histogramSeconds !== undefined) return { query: this.histogram(window.histogramSeconds, from, conditions), shape: 'chart' };
    if (this.rules.chart) return { query: this.chart(this.rules.chart, from, conditions), shape: 'chart' };
    if (window.before) {
      const ts = n.path(pos, T, 'timestamp');
      const at = n.timestamp(pos, window.before.timestamp);
      conditions.push(
        n.logical(pos, 'OR', [
          n.binary(pos, '<', ts, at),
          n.logical(pos, 'AND', [n.binary(pos, '=', ts, at), n.binary(pos, '<', n.path(pos, T, 'id'), n.str(pos, window.before.id))]),
        ]),
      );
    }
    const body = n.select(pos, {
      items: this.selection(),
      from,
      ...(conditions.length && { where: n.logical(pos, 'AND', conditions) }),
    });
    if (this.target.kind === 'cte') return { query: n.query(pos, body), shape: 'events' };
    return {
      query: n.query(pos, body, {
        orderBy: [n.order(pos, n.path(pos, T, 'timestamp'), !window.ascending), n.order(pos, n.path(pos, T, 'id'), !window.ascending)],
        ...(window.limit !== undefined && { limit: n.num(pos, String(window.limit)) }),
      }),
      shape: 'events',
    };
  }

  private tableName(): string {
    const from = this.rules.from;
    if (this.target.kind === 'cte') return from?.table ?? this.target.name;
    if (from && from.table !== this.target.source.name)
      throw new LqlError(`f:${from.table} names another source than ${this.target.source.name}`, this.rules.text, from.pos);
    return this.target.source.name;
  }

  // ── selection ──

  private selection(): Q.SelectItem[] {
    const selects = this.rules.selects.filter((s) => s.path !== '*');
    const star = this.rules.selects.some((s) => s.path === '*');
    if (this.target.kind === 'source') {
      if (star || !selects.length) return [{ kind: 'selectStar', pos: 0, qualifier: [T], except: [] }];
      // The page needs the two columns its cursor is made of.
      const items = selects.map((s) => this.selectItem(s));
      for (const column of ['id', 'timestamp'])
        if (!selects.some((s) => s.path === column && !s.alias)) items.push(n.item(0, n.path(0, T, column), column));
      return items;
    }
    if (selects.length && !star) return selects.map((s) => this.selectItem(s));
    // The original's sandboxed selection: the timestamp and every filtered field.
    const paths = new Set(['timestamp', ...this.rules.filters.map((f) => f.path)]);
    return [...paths].map((p) => n.item(0, n.path(0, T, ...p.split('.')), p));
  }

  private selectItem(s: SelectRule): Q.SelectExpr {
    return n.item(s.pos, this.scalarRead(s.path, s.pos), s.alias ?? s.path);
  }

  /** A field as one value: the first element of each record on the way (`metadata[SAFE_OFFSET(0)].user…`). */
  private scalarRead(path: string, pos: number): E.Expr {
    return this.firstElements(this.access(path, pos), pos);
  }

  private firstElements(access: Access, pos: number): E.Expr {
    let expr: E.Expr | undefined;
    for (const record of access.records) {
      expr = expr ? { kind: 'field', pos, base: expr, name: record } : n.path(pos, T, record);
      // A source's records are arrays (the stored shape); a CTE column is what the CTE made it.
      if (this.target.kind === 'source') expr = { kind: 'subscript', pos, base: expr, index: n.num(pos, '0'), mode: 'SAFE_OFFSET' };
    }
    return expr ? { kind: 'field', pos, base: expr, name: access.leaf } : n.path(pos, T, access.leaf);
  }

  // ── fields ──

  private access(path: string, pos: number): Access {
    const parts = path.split('.');
    if (this.target.kind === 'cte') return { records: parts.slice(0, -1), leaf: parts[parts.length - 1], repeated: false, single: true };
    const fixed = (FIXED_COLUMNS as Record<string, FieldSchema>)[parts[0]];
    const fail = (detail: string) => new LqlError(detail, this.rules.text, pos);
    let field: FieldSchema | undefined = fixed ?? this.target.source.fields[parts[0]];
    const records: string[] = [];
    let single = true;
    for (let i = 1; i < parts.length; i++) {
      if (field?.type !== 'RECORD') break;
      records.push(parts[i - 1]);
      single &&= field.single === true;
      field = field.fields?.[parts[i]];
    }
    if (!field || records.length !== parts.length - 1)
      throw fail(`path \`${path}\` is not present in the schema of source ${this.target.source.name}`);
    if (field.type === 'RECORD') throw fail(`\`${path}\` is a record: name one of its fields`);
    return { records, leaf: parts[parts.length - 1], type: field.type, repeated: field.repeated, single };
  }

  private alias(): string {
    return `lql_${++this.aliases}`;
  }

  /** The records of `access` unnested from the table: the FROM of an EXISTS, and the leaf read from its last alias. */
  private unnestChain(access: Access, pos: number): { from?: F.FromItem; leaf: E.Expr } {
    // perf: records of one object are read, not unnested: a plain expression the planner (and a hot leaf) serves.
    if (access.single) return { leaf: this.firstElements(access, pos) };
    let from: F.FromItem | undefined;
    let base = T;
    for (const record of access.records) {
      const alias = this.alias();
      const step = n.unnest(pos, n.path(pos, base, record), alias);
      from = from ? n.join(pos, 'CROSS', from, step) : step;
      base = alias;
    }
    return { ...(from && { from }), leaf: n.path(pos, base, access.leaf) };
  }

  // ── filters ──

  private filter(f: FilterRule): E.Expr {
    if (f.path === 'timestamp' && f.time) return this.timeFilter(f);
    const access = this.access(f.path, f.pos);
    const isNullTest = f.value && !f.value.quoted && f.value.text === 'NULL' && f.operator === '=';
    const { from, leaf } = this.unnestChain(access, f.pos);
    if (isNullTest) {
      // Some element has the field (negated) / none has it.
      if (!from) return n.isNull(f.pos, leaf, f.negate);
      const any = n.exists(f.pos, from, n.isNull(f.pos, leaf, true));
      return f.negate ? any : n.not(f.pos, any);
    }
    const test = this.test(f, access, leaf);
    if (!from) {
      // As the original: a negated test on a column holds where the column is NULL.
      return f.negate ? n.logical(f.pos, 'OR', [n.isNull(f.pos, leaf), n.not(f.pos, test)]) : test;
    }
    const any = n.exists(f.pos, from, test);
    return f.negate ? n.not(f.pos, any) : any;
  }

  private test(f: FilterRule, access: Access, leaf: E.Expr): E.Expr {
    const pos = f.pos;
    if (f.operator === 'includes' || f.operator === 'includesRegex' || (access.repeated && f.operator === '=')) {
      if (this.target.kind === 'source' && !access.repeated)
        throw new LqlError(`\`${f.path}\` is not an array: @> tests arrays`, this.rules.text, pos);
      const element = this.alias();
      const value = f.value!;
      const cond =
        f.operator === 'includesRegex'
          ? this.regex(pos, n.path(pos, element), value.text, access.type)
          : n.binary(pos, '=', n.path(pos, element), this.literal(value, access.type, f.path));
      // Under records, this EXISTS is inside the one over the records (filter()).
      return n.exists(pos, n.unnest(pos, leaf, element), cond);
    }
    if (f.range) {
      const [low, high] = f.range.map((v) => this.literal(v, access.type, f.path));
      return { kind: 'between', pos, operand: leaf, low, high, negated: false };
    }
    if (f.anyOf)
      return { kind: 'inList', pos, operand: leaf, list: f.anyOf.map((v) => this.literal(v, access.type, f.path)), negated: false };
    const value = f.value!;
    if (f.contains) return n.like(pos, leaf, `%${escapeLike(value.text)}%`);
    if (f.operator === '~') return this.regex(pos, leaf, value.text, access.type);
    return n.binary(pos, f.operator, leaf, this.literal(value, access.type, f.path));
  }

  /** A regex test; a pattern without metacharacters is a LIKE, which a trigram index serves as well and costs less. */
  private regex(pos: number, operand: E.Expr, pattern: string, type: ScalarType | undefined): E.Expr {
    const text = type === undefined || type === 'STRING' ? operand : n.cast(pos, operand, 'STRING');
    if (!REGEX_META.test(pattern)) return n.like(pos, text, `%${escapeLike(pattern)}%`);
    return n.call(pos, 'regexp_contains', [text, n.str(pos, pattern)]);
  }

  /** A value typed by the field's schema type, refused as the original refuses it (`expected integer for m.x`). */
  private literal(v: LqlValue, type: ScalarType | undefined, path: string): E.Expr {
    const fail = (what: string) => new LqlError(`expected ${what} for ${path}, got "${v.text}"`, this.rules.text, v.pos);
    switch (type) {
      case 'STRING':
        return n.str(v.pos, v.text);
      case 'INT64':
        if (!/^-?\d+$/.test(v.text)) throw fail('an integer');
        return n.num(v.pos, v.text);
      case 'FLOAT64':
        if (!/^-?\d+(\.\d+)?$/.test(v.text)) throw fail('a number');
        return n.num(v.pos, v.text, 'FLOAT64');
      case 'BOOL':
        if (v.text !== 'true' && v.text !== 'false') throw fail('true or false');
        return n.bool(v.pos, v.text === 'true');
      case 'TIMESTAMP':
        if (Number.isNaN(Date.parse(v.text))) throw fail('a datetime');
        return n.timestamp(v.pos, v.text);
      default:
        // No schema (a CTE column): the original's best effort.
        if (!v.quoted && /^-?\d+$/.test(v.text)) return n.num(v.pos, v.text);
        if (!v.quoted && /^-?\d+\.\d+$/.test(v.text)) return n.num(v.pos, v.text, 'FLOAT64');
        if (!v.quoted && (v.text === 'true' || v.text === 'false')) return n.bool(v.pos, v.text === 'true');
        return n.str(v.pos, v.text);
    }
  }

  // ── timestamps ──

  private timeFilter(f: FilterRule): E.Expr {
    const pos = f.pos;
    const ts = n.path(pos, T, 'timestamp');
    const time = f.time!;
    let cond: E.Expr;
    if (time.to) {
      const to = this.moment(time.to, pos);
      cond = time.toExclusive
        ? n.logical(pos, 'AND', [n.binary(pos, '>=', ts, this.moment(time.from, pos)), n.binary(pos, '<', ts, to)])
        : { kind: 'between', pos, operand: ts, low: this.moment(time.from, pos), high: to, negated: false };
    } else if (time.from.kind === 'iso' && time.from.dateOnly && f.operator === '=') {
      // A date alone is its whole day.
      const day = this.moment(time.from, pos);
      cond = n.logical(pos, 'AND', [
        n.binary(pos, '>=', ts, day),
        n.binary(pos, '<', ts, n.call(pos, 'timestamp_add', [day, n.interval(pos, 1, 'day')])),
      ]);
    } else cond = n.binary(pos, f.operator as E.BinaryOp, ts, this.moment(time.from, pos));
    return f.negate ? n.not(pos, cond) : cond;
  }

  private moment(m: Moment, pos: number): E.Expr {
    if (m.kind === 'iso') return n.timestamp(pos, m.iso);
    let expr: E.Expr = n.call(pos, 'current_timestamp', []);
    if (m.ago > 0) expr = n.call(pos, 'timestamp_sub', [expr, n.interval(pos, m.ago, m.unit)]);
    if (m.ago < 0) expr = n.call(pos, 'timestamp_add', [expr, n.interval(pos, -m.ago, m.unit)]);
    if (m.truncate === 'week') {
      // Weeks start on Monday, as the original's; BigQuery's WEEK starts on Sunday: truncate the day before, add a day.
      const dayBefore = n.call(pos, 'timestamp_sub', [expr, n.interval(pos, 1, 'day')]);
      return n.call(pos, 'timestamp_add', [n.call(pos, 'timestamp_trunc', [dayBefore, n.path(pos, 'WEEK')]), n.interval(pos, 1, 'day')]);
    }
    if (m.truncate) expr = n.call(pos, 'timestamp_trunc', [expr, n.path(pos, m.truncate.toUpperCase())]);
    return expr;
  }

  // ── charts ──

  private chart(c: ChartRule, table: F.FromItem, conditions: E.Expr[]): Q.Query {
    const pos = c.pos;
    const bucket = n.call(pos, 'timestamp_trunc', [n.path(pos, T, 'timestamp'), n.path(pos, c.period.toUpperCase())]);
    let from: F.FromItem = table;
    let value: E.Expr;
    if (c.aggregate === 'count' && c.path === 'timestamp') value = n.call(pos, 'count', [], { star: true });
    else {
      const access = this.access(c.path, pos);
      let base = T;
      // A field under records: each element counts (LEFT JOIN keeps the events without it, as NULL).
      for (const record of access.records) {
        const alias = this.alias();
        from = n.join(pos, 'LEFT', from, n.unnest(pos, n.path(pos, base, record), alias), n.bool(pos, true));
        base = alias;
      }
      const field = n.path(pos, base, access.leaf);
      if (
        c.aggregate !== 'count' &&
        c.aggregate !== 'countd' &&
        access.type !== undefined &&
        access.type !== 'INT64' &&
        access.type !== 'FLOAT64'
      )
        throw new LqlError(`c:${c.aggregate} takes a number, and ${c.path} is ${access.type}`, this.rules.text, pos);
      value = this.aggregate(c, field);
    }
    const body = n.select(pos, {
      items: [n.item(pos, bucket, 'timestamp'), n.item(pos, value, 'value')],
      from,
      ...(conditions.length && { where: n.logical(pos, 'AND', conditions) }),
      groupBy: [bucket],
    });
    return n.query(pos, body, { orderBy: [n.order(pos, n.path(pos, 'timestamp'), false)] });
  }

  /** Buckets of `seconds` from the Unix epoch: `TIMESTAMP_SECONDS(CAST(FLOOR(UNIX_SECONDS(ts) / w) AS INT64) * w)`. */
  private histogram(seconds: number, from: F.FromItem, conditions: E.Expr[]): Q.Query {
    const pos = 0;
    const w = n.num(pos, String(seconds));
    const quotient = n.call(pos, 'floor', [n.binary(pos, '/', n.call(pos, 'unix_seconds', [n.path(pos, T, 'timestamp')]), w)]);
    const bucket = n.call(pos, 'timestamp_seconds', [n.binary(pos, '*', n.cast(pos, quotient, 'INT64'), w)]);
    const body = n.select(pos, {
      items: [n.item(pos, bucket, 'timestamp'), n.item(pos, n.call(pos, 'count', [], { star: true }), 'value')],
      from,
      ...(conditions.length && { where: n.logical(pos, 'AND', conditions) }),
      groupBy: [bucket],
    });
    return n.query(pos, body, { orderBy: [n.order(pos, n.path(pos, 'timestamp'), false)] });
  }

  private aggregate(c: ChartRule, field: E.Expr): E.Expr {
    const pos = c.pos;
    switch (c.aggregate) {
      case 'count':
        return n.call(pos, 'count', [field]);
      case 'countd':
        return n.call(pos, 'count', [field], { distinct: true });
      case 'avg':
      case 'sum':
      case 'max':
        return n.call(pos, c.aggregate, [field]);
      default: {
        const quantiles = n.call(pos, 'approx_quantiles', [field, n.num(pos, '100')]);
        return { kind: 'subscript', pos, base: quantiles, index: n.num(pos, c.aggregate.slice(1)), mode: 'OFFSET' };
      }
    }
  }
}

/** A LIKE pattern matching `text` literally: `\`, `%` and `_` escaped with `\`, LIKE's default escape. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
