/**
 * LQL text → rules (src/lql/rules.ts). The grammar is docs/LQL.md; it is the original service's
 * (Logflare, `lib/logflare/lql/parser/combinators.ex`), read as facts, with one difference: a
 * value must end where its clause ends (`m.x:1abc` is an error here, two filters there).
 *
 *   parseLql('error m.status:>=500 -m.user.plan:NULL t:last@1h c:count(*) c:group_by(t::minute)')
 *
 * Clauses are separated by whitespace; each is tried in the original's order: `f:`, `c:`, `s:`,
 * `t:`, `metadata.level:` ranges, `m.`/`metadata.` fields, other fields, a quoted phrase, a word.
 */
import { MAX_QUERY_BYTES } from '../inputLimits.js';
import { LqlError } from './errors.js';
import type {
  ChartAggregate,
  ChartPeriod,
  ChartRule,
  FilterOperator,
  FilterRule,
  FromRule,
  LqlRules,
  LqlValue,
  Moment,
  SelectRule,
  TimeUnit,
} from './rules.js';

/** The original's limit on clauses (`times(min: 1, max: 100)`). */
export const MAX_LQL_CLAUSES = 100;

const WHITESPACE = /\s/;
/** Characters of a bare word (the original's `word` combinator), besides `\"`. */
const WORD_CHAR = /[A-Za-z0-9._!%$^\\+[\]?(){}#&*\-/<=>@;,|]/;
const FIELD_PATH = /^[A-Za-z0-9_.]+/;
const OPERATORS: readonly (readonly [string, FilterOperator])[] = [
  [':>=', '>='],
  [':<=', '<='],
  [':>', '>'],
  [':<', '<'],
  [':~', '~'],
  [':@>~', 'includesRegex'],
  [':@>', 'includes'],
  [':', '='],
];
const AGGREGATES: readonly ChartAggregate[] = ['avg', 'countd', 'count', 'sum', 'max', 'p50', 'p95', 'p99'];
const PERIODS: readonly (readonly [string, ChartPeriod])[] = [
  ['second', 'second'],
  ['s', 'second'],
  ['minute', 'minute'],
  ['m', 'minute'],
  ['hour', 'hour'],
  ['h', 'hour'],
  ['day', 'day'],
  ['d', 'day'],
];
/** `last@…`/`this@…` units, longest first as the original tries them (`mm` is months, `m` minutes). */
const TIME_UNITS: readonly (readonly [string, TimeUnit])[] = [
  ['weeks', 'week'],
  ['months', 'month'],
  ['days', 'day'],
  ['years', 'year'],
  ['hours', 'hour'],
  ['minutes', 'minute'],
  ['seconds', 'second'],
  ['week', 'week'],
  ['month', 'month'],
  ['day', 'day'],
  ['year', 'year'],
  ['hour', 'hour'],
  ['minute', 'minute'],
  ['second', 'second'],
  ['mm', 'month'],
  ['s', 'second'],
  ['m', 'minute'],
  ['h', 'hour'],
  ['d', 'day'],
  ['w', 'week'],
  ['y', 'year'],
];
/** Syslog levels in order, for `metadata.level:info..error`. */
export const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;

const DATE = String.raw`\d{4}-\d{2}-\d{2}`;
const DATETIME = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?`;
const ZONE = String.raw`(?:Z|[+-]\d{2}:\d{2})`;
/** A datetime with optional zone, or a date (field values and timestamps). */
const DATE_OR_DATETIME = `(?:${DATETIME}${ZONE}?|${DATE})`;
const NUMBER = String.raw`\d+(?:\.\d+)?`;

export function parseLql(text: string): LqlRules {
  if (Buffer.byteLength(text, 'utf8') > MAX_QUERY_BYTES) throw new LqlError(`LQL over ${MAX_QUERY_BYTES} bytes`, text, 0);
  return new Parser(text).parse();
}

class Parser {
  private pos = 0;
  private readonly filters: FilterRule[] = [];
  private readonly selects: SelectRule[] = [];
  private readonly charts: { aggregate?: [ChartAggregate, string]; period?: ChartPeriod; pos: number }[] = [];
  private from: FromRule | undefined;

  constructor(private readonly text: string) {}

  parse(): LqlRules {
    let clauses = 0;
    for (this.skipSpace(); this.pos < this.text.length; this.skipSpace()) {
      if (++clauses > MAX_LQL_CLAUSES) throw this.error(`more than ${MAX_LQL_CLAUSES} clauses`);
      this.clause();
      if (this.pos < this.text.length && !WHITESPACE.test(this.text[this.pos]))
        throw this.error(`unexpected "${this.text[this.pos]}" after the clause`);
    }
    return {
      text: this.text,
      filters: this.filters,
      selects: this.selects,
      ...(this.from && { from: this.from }),
      ...(this.charts.length && { chart: this.chart() }),
    };
  }

  private clause(): void {
    const start = this.pos;
    const negate = this.text[this.pos] === '-' && this.pos + 1 < this.text.length && !WHITESPACE.test(this.text[this.pos + 1]);
    if (negate) this.pos++;
    const rest = this.text.slice(this.pos);
    const prefix = /^(from|f|chart|c|select|s|timestamp|t):/.exec(rest);
    if (prefix) {
      const kind = prefix[1][0];
      if (kind !== 't' && negate) throw new LqlError(`"-" negates a filter, not ${prefix[1]}:`, this.text, start);
      if (kind === 'f') return this.fromClause(prefix[0].length, start);
      if (kind === 'c') return this.chartClause(prefix[0].length, start);
      if (kind === 's') return this.selectClause(prefix[0].length, start);
      this.pos += prefix[1].length;
      return this.timestampClause(negate, start);
    }
    const level = new RegExp(`^metadata\\.level:(${LEVELS.join('|')})\\.\\.(${LEVELS.join('|')})(?=\\s|$)`).exec(rest);
    if (level) {
      const [low, high] = [LEVELS.indexOf(level[1] as never), LEVELS.indexOf(level[2] as never)];
      if (low > high) throw new LqlError(`level range ${level[1]}..${level[2]} is empty`, this.text, start);
      this.pos += level[0].length;
      const values = LEVELS.slice(low, high + 1).map((l) => ({ text: l, quoted: true, pos: start }));
      this.filters.push({ kind: 'filter', path: 'metadata.level', operator: '=', anyOf: values, negate, pos: start });
      return;
    }
    const field = FIELD_PATH.exec(rest);
    if (field && rest[field[0].length] === ':') {
      const path = field[0].replace(/^m\./, 'metadata.');
      if (/^\.|\.$|\.\./.test(path)) throw this.error(`"${field[0]}" is not a field path`);
      this.pos += field[0].length;
      return this.fieldClause(path, negate, start);
    }
    return this.messageClause(negate, start);
  }

  // ── f: c: s: ──

  private fromClause(skip: number, start: number): void {
    this.pos += skip;
    const name = /^[A-Za-z0-9_.-]+/.exec(this.text.slice(this.pos));
    if (!name) throw this.error('f: takes a table name');
    if (this.from) throw new LqlError('only one f: is allowed', this.text, start);
    this.pos += name[0].length;
    this.from = { kind: 'from', table: name[0], pos: start };
  }

  private chartClause(skip: number, start: number): void {
    this.pos += skip;
    const rest = this.text.slice(this.pos);
    const groupBy = /^group_by\((?:timestamp|t)::([a-z]+)\)/.exec(rest);
    if (groupBy) {
      const period = PERIODS.find(([word]) => word === groupBy[1]);
      if (!period) throw this.error(`c:group_by takes second, minute, hour or day, not "${groupBy[1]}"`);
      this.pos += groupBy[0].length;
      this.charts.push({ period: period[1], pos: start });
      return;
    }
    const call = /^([a-z0-9]+)\(([^)\s]*)\)/.exec(rest);
    const aggregate = call && AGGREGATES.find((a) => a === call[1]);
    if (!call || !aggregate)
      throw this.error('c: takes count(*), countd(field), avg(field), sum(field), max(field), p50/p95/p99(field) or group_by(t::unit)');
    const path = call[2] === '*' ? 'timestamp' : this.fieldPath(call[2], this.pos + call[1].length + 1);
    this.pos += call[0].length;
    this.charts.push({ aggregate: [aggregate, path], pos: start });
  }

  /** The chart clauses merged, as the original merges them: the last of each kind wins. */
  private chart(): ChartRule {
    let aggregate: [ChartAggregate, string] = ['count', 'timestamp'];
    let period: ChartPeriod = 'minute';
    for (const c of this.charts) {
      if (c.aggregate) aggregate = c.aggregate;
      if (c.period) period = c.period;
    }
    return { kind: 'chart', aggregate: aggregate[0], path: aggregate[1], period, pos: this.charts[0].pos };
  }

  private selectClause(skip: number, start: number): void {
    this.pos += skip;
    const m = /^(\*|[A-Za-z0-9_.]+)(@([A-Za-z0-9_]*))?/.exec(this.text.slice(this.pos));
    if (!m) throw this.error('s: takes a field path or *');
    if (m[2] !== undefined && !m[3]) throw new LqlError('s: alias after "@" is empty', this.text, this.pos + m[0].length);
    const path = m[1] === '*' ? '*' : this.fieldPath(m[1], this.pos);
    this.pos += m[0].length;
    this.selects.push({ kind: 'select', path, ...(m[3] && { alias: m[3] }), pos: start });
  }

  private fieldPath(written: string, at: number): string {
    if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(written)) throw new LqlError(`"${written}" is not a field path`, this.text, at);
    return written.replace(/^m\./, 'metadata.');
  }

  // ── filters ──

  private operator(): FilterOperator {
    for (const [written, op] of OPERATORS)
      if (this.text.startsWith(written, this.pos)) {
        this.pos += written.length;
        return op;
      }
    throw this.error('expected ":" and an operator');
  }

  private fieldClause(path: string, negate: boolean, start: number): void {
    const operator = this.operator();
    const at = this.pos;
    const rest = this.text.slice(this.pos);
    if (rest === '' || WHITESPACE.test(rest[0])) throw this.error(`${path} needs a value after "${this.text.slice(start, at)}"`);
    const end = String.raw`(?=\s|$)`;
    const rule = { kind: 'filter' as const, path, operator, negate, pos: start };
    const range = new RegExp(`^(${DATE_OR_DATETIME}|${NUMBER})\\.\\.(${DATE_OR_DATETIME}|${NUMBER})${end}`).exec(rest);
    if (range) {
      if (operator !== '=') throw new LqlError('a range takes ":" alone', this.text, at);
      this.pos += range[0].length;
      const high = at + range[1].length + 2;
      this.filters.push({ ...rule, range: [value(range[1], false, at), value(range[2], false, high)] });
      return;
    }
    if (rest[0] === '"') {
      this.filters.push({ ...rule, value: this.quoted() });
      return;
    }
    if (rest[0] === '(' && operator === '=') {
      const close = rest.indexOf(')');
      if (close < 0) throw this.error('")" expected');
      this.pos += close + 1;
      this.filters.push({ ...rule, value: value(rest.slice(1, close), true, at) });
      return;
    }
    // A regex may hold any character up to the clause's end; other values are one token.
    const token = /^\S+/.exec(rest)![0];
    const plain = new RegExp(`^(?:${DATE_OR_DATETIME}|${NUMBER}|[A-Za-z0-9_]+)$`).test(token);
    if (!plain && operator !== '~' && operator !== 'includesRegex')
      throw this.error(`"${token}" is not a value: quote it ("…") if it holds other characters than letters, digits and "_"`);
    this.pos += token.length;
    this.filters.push({ ...rule, value: value(token, false, at) });
  }

  private timestampClause(negate: boolean, start: number): void {
    const operator = this.operator();
    if (operator === '~' || operator === 'includes' || operator === 'includesRegex')
      throw new LqlError('a timestamp takes ":", ":>", ":>=", ":<" or ":<="', this.text, start);
    const at = this.pos;
    const token = /^\S*/.exec(this.text.slice(this.pos))![0];
    const time = timeValue(token, operator, this.text, at);
    this.pos += token.length;
    this.filters.push({ kind: 'filter', path: 'timestamp', operator, time, negate, pos: start });
  }

  private messageClause(negate: boolean, start: number): void {
    const regex = this.text[this.pos] === '~';
    if (regex) this.pos++;
    const rule = { kind: 'filter' as const, path: 'event_message', negate, pos: start };
    if (this.text[this.pos] === '"') {
      const phrase = this.quoted();
      this.filters.push(regex ? { ...rule, operator: '~', value: phrase } : { ...rule, operator: '=', contains: true, value: phrase });
      return;
    }
    const at = this.pos;
    let word = '';
    while (this.pos < this.text.length) {
      if (this.text.startsWith('\\"', this.pos)) {
        word += '\\"';
        this.pos += 2;
      } else if (WORD_CHAR.test(this.text[this.pos])) word += this.text[this.pos++];
      else break;
    }
    if (!word) throw this.error(`unexpected "${this.text[this.pos] ?? ''}"`);
    // In a bare word, `\"` is a quote (`~some\"value`); a regex keeps its other backslashes.
    const w = value(regex ? word : word.replaceAll('\\"', '"'), false, at);
    this.filters.push(regex ? { ...rule, operator: '~', value: w } : { ...rule, operator: '=', contains: true, value: w });
  }

  /** `"…"` with `\"` for a quote and `\\` for a backslash; other backslashes are kept (`~"\d\d"` is a regex). */
  private quoted(): LqlValue {
    const at = this.pos;
    let text = '';
    for (let i = this.pos + 1; i < this.text.length; i++) {
      const c = this.text[i];
      if (c === '\\' && (this.text[i + 1] === '"' || this.text[i + 1] === '\\')) {
        text += this.text[++i];
      } else if (c === '"') {
        this.pos = i + 1;
        return value(text, true, at);
      } else text += c;
    }
    throw new LqlError('unclosed quote', this.text, at);
  }

  private skipSpace(): void {
    while (this.pos < this.text.length && WHITESPACE.test(this.text[this.pos])) this.pos++;
  }

  private error(detail: string): LqlError {
    return new LqlError(detail, this.text, this.pos);
  }
}

function value(text: string, quoted: boolean, pos: number): LqlValue {
  return { text, quoted, pos };
}

// ── timestamps ──

const DATETIME_VALUE = new RegExp(`^(${DATETIME})(${ZONE})?$`);
const DATE_VALUE = new RegExp(`^${DATE}$`);

function timeValue(token: string, operator: FilterOperator, text: string, at: number): NonNullable<FilterRule['time']> {
  const fail = (detail: string) => new LqlError(detail, text, at);
  if (!token) throw fail('a timestamp value is expected');
  const shorthand = shorthandValue(token);
  if (shorthand) return shorthand;
  if (token.includes('{')) {
    if (operator !== '=') throw fail('a brace range takes ":" alone');
    return braceRange(token, fail);
  }
  const parts = token.split('..');
  if (parts.length === 2) {
    if (operator !== '=') throw fail('a range takes ":" alone');
    const [from, to] = parts.map((p) => moment(p, fail));
    if (hasZone(parts[0]) !== hasZone(parts[1])) throw fail('a timestamp range cannot mix timestamps with and without a time zone offset');
    return { from, to };
  }
  return { from: moment(token, fail) };
}

/** A Unix timestamp or a datetime with `Z`/`±hh:mm` names an instant; a datetime without is read as UTC. */
function hasZone(text: string): boolean {
  return /^\d+$/.test(text) || /(Z|[+-]\d{2}:\d{2})$/.test(text);
}

function moment(text: string, fail: (d: string) => LqlError): Moment {
  if (/^\d+$/.test(text)) {
    // Seconds, milliseconds, or microseconds (truncated to milliseconds), as the original accepts.
    const ms =
      text.length === 10
        ? Number(text) * 1000
        : text.length === 13
          ? Number(text)
          : text.length === 16
            ? Math.trunc(Number(text) / 1000)
            : NaN;
    if (Number.isNaN(ms)) throw fail(`"${text}" is not a timestamp: a Unix timestamp has 10, 13 or 16 digits`);
    return { kind: 'iso', iso: new Date(ms).toISOString(), dateOnly: false };
  }
  const dt = DATETIME_VALUE.exec(text);
  if (dt) {
    const iso = `${dt[1]}${dt[2] ?? 'Z'}`;
    if (Number.isNaN(Date.parse(iso)) || !validParts(dt[1])) throw fail(`"${text}" is not a valid datetime`);
    return { kind: 'iso', iso, dateOnly: false };
  }
  if (DATE_VALUE.test(text)) {
    if (!validParts(text)) throw fail(`"${text}" is not a valid date`);
    return { kind: 'iso', iso: `${text}T00:00:00Z`, dateOnly: true };
  }
  throw fail(
    `"${text}" is not a timestamp: write a date, a datetime, a Unix timestamp, a range or today, yesterday, this@unit, last@N unit`,
  );
}

/** Month 1–12, day within the month, hour < 24, minute and second < 60 (Date.parse rolls some over). */
function validParts(text: string): boolean {
  const [y, mo, d, h = 0, mi = 0, s = 0] = text.split(/[-T:.]/).map(Number);
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return mo >= 1 && mo <= 12 && d >= 1 && d <= days && h < 24 && mi < 60 && s < 60;
}

function shorthandValue(token: string): FilterRule['time'] | undefined {
  const now: Moment = { kind: 'relative', ago: 0, unit: 'second' };
  if (token === 'now') return { from: now };
  if (token === 'today')
    return {
      from: { kind: 'relative', ago: 0, unit: 'day', truncate: 'day' },
      to: { kind: 'relative', ago: -1, unit: 'day', truncate: 'day' },
      toExclusive: true,
    };
  if (token === 'yesterday')
    return {
      from: { kind: 'relative', ago: 1, unit: 'day', truncate: 'day' },
      to: { kind: 'relative', ago: 0, unit: 'day', truncate: 'day' },
      toExclusive: true,
    };
  const m = /^(this|last)@(\d{0,4})([a-z]+)$/.exec(token);
  if (!m) return undefined;
  const unit = TIME_UNITS.find(([word]) => word === m[3])?.[1];
  if (!unit || (m[1] === 'this' && m[2] !== '')) return undefined;
  if (m[1] === 'this') return { from: { kind: 'relative', ago: 0, unit, truncate: unit }, to: now };
  // last@N unit: now minus N units, its smaller parts zeroed as the original does (last@7d starts at midnight).
  const count = m[2] === '' ? 1 : Number(m[2]);
  const truncate: TimeUnit | undefined = unit === 'second' ? undefined : unit === 'minute' ? 'minute' : unit === 'hour' ? 'hour' : 'day';
  return { from: { kind: 'relative', ago: count, unit, ...(truncate && { truncate }) }, to: now };
}

/** `2022-04-{07..09}T00:{00..40}:00.{001..314}`: the lows make the start, the highs the end (both included). */
function braceRange(token: string, fail: (d: string) => LqlError): NonNullable<FilterRule['time']> {
  const m =
    /^(\d{4}|\{\d{4}\.\.\d{4}\})-(\d{2}|\{\d{2}\.\.\d{2}\})-(\d{2}|\{\d{2}\.\.\d{2}\})(?:T(\d{2}|\{\d{2}\.\.\d{2}\}):(\d{2}|\{\d{2}\.\.\d{2}\}):(\d{2}|\{\d{2}\.\.\d{2}\})(?:\.(\d{1,6}|\{\d{1,6}\.\.\d{1,6}\}))?(Z|[+-]\d{2}:\d{2})?)?$/.exec(
      token,
    );
  if (!m) throw fail(`"${token}" is not a datetime with ranges like 2022-04-{07..09}T00:{00..40}:00`);
  const end = (part: string | undefined, high: boolean, fallback: string) => {
    if (part === undefined) return fallback;
    const r = /^\{(\d+)\.\.(\d+)\}$/.exec(part);
    return r ? r[high ? 2 : 1] : part;
  };
  const build = (high: boolean): Moment => {
    const date = `${end(m[1], high, '')}-${end(m[2], high, '')}-${end(m[3], high, '')}`;
    if (m[4] === undefined) {
      // A date range covers its last day whole.
      return moment(high ? `${date}T23:59:59.999999` : date, fail);
    }
    const frac = m[7] === undefined ? '' : `.${end(m[7], high, '')}`;
    return moment(`${date}T${end(m[4], high, '')}:${end(m[5], high, '')}:${end(m[6], high, '')}${frac}${m[8] ?? ''}`, fail);
  };
  return { from: build(false), to: build(true) };
}
