/**
 * What an LQL query says, clause by clause (docs/LQL.md): the parser's output and the builder's
 * input. Every rule remembers the offset of its clause in the LQL text, so an error found when
 * the rule meets the source schema still points at the clause.
 */

/** A value as written: its text (unescaped when quoted), and whether it was quoted. */
export interface LqlValue {
  readonly text: string;
  readonly quoted: boolean;
  readonly pos: number;
}

export type FilterOperator = '=' | '>' | '>=' | '<' | '<=' | '~' | 'includes' | 'includesRegex';

/** A moment: an ISO 8601 text Postgres reads as a timestamptz, or `now` shifted/truncated. */
export type Moment =
  | { readonly kind: 'iso'; readonly iso: string; readonly dateOnly: boolean }
  | {
      readonly kind: 'relative';
      /** `now` minus `ago` of `unit`, then truncated to `truncate` when set. */
      readonly ago: number;
      readonly unit: TimeUnit;
      readonly truncate?: TimeUnit;
    };

export type TimeUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

export interface FilterRule {
  readonly kind: 'filter';
  /** `event_message`, `timestamp`, `metadata.user.id`, `a.b` … (`m.` already spelled `metadata.`). */
  readonly path: string;
  readonly operator: FilterOperator;
  /** One value; a range has `range` instead. NULL is `{ text: 'NULL', quoted: false }`. */
  readonly value?: LqlValue;
  readonly range?: readonly [LqlValue, LqlValue];
  /** Any one of these values (`metadata.level:info..error`). */
  readonly anyOf?: readonly LqlValue[];
  /** Timestamp filters: the moments (one, or two for a range, both ends included). */
  readonly time?: { readonly from: Moment; readonly to?: Moment; readonly toExclusive?: boolean };
  /** A bare word or phrase on the message: a containment test (LIKE '%…%'). */
  readonly contains?: boolean;
  readonly negate: boolean;
  readonly pos: number;
}

export type ChartAggregate = 'count' | 'countd' | 'avg' | 'sum' | 'max' | 'p50' | 'p95' | 'p99';
export type ChartPeriod = 'second' | 'minute' | 'hour' | 'day';

export interface ChartRule {
  readonly kind: 'chart';
  readonly aggregate: ChartAggregate;
  /** The aggregated field; `timestamp` for `count(*)`. */
  readonly path: string;
  readonly period: ChartPeriod;
  readonly pos: number;
}

export interface SelectRule {
  readonly kind: 'select';
  /** A field path, or `*`. */
  readonly path: string;
  readonly alias?: string;
  readonly pos: number;
}

export interface FromRule {
  readonly kind: 'from';
  readonly table: string;
  readonly pos: number;
}

export interface LqlRules {
  readonly text: string;
  readonly filters: readonly FilterRule[];
  readonly chart?: ChartRule;
  readonly selects: readonly SelectRule[];
  readonly from?: FromRule;
}
