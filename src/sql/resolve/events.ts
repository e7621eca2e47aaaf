/**
 * Event rows: where each row of a query is one event of one source, names that none of its
 * columns answer to read the event's own top-level fields, as on the original's Postgres backend
 * (docs/COMPATIBILITY.md, "Unknown fields"). Studio's log pages filter `logs.all`'s CTEs this way:
 * `select id from etl_replication_logs where pipeline_id = 42` selects from a CTE that keeps
 * `id, timestamp, event_message, metadata` of one source, and names a field the CTE never
 * selected.
 *
 * A plain SELECT row for row over exactly one event carrier (a source table, or a relation whose
 * rows are events) is itself a carrier. As a CTE, derived table or endpoint read as a table, it
 * passes the event's `body` on as a hidden output column (EVENT_BODY_COLUMN, not part of `*`);
 * readers read unknown names through it. The pass "unread event bodies dropped"
 * (src/sql/postgres/eventBodies.ts) removes the column wherever no reader reads it, so queries that
 * do not use this pay nothing (a CTE read twice is materialised with every column it selects).
 *
 * With two carriers in scope, a name either could hold is a guess, so it stays an error that
 * asks to qualify it.
 */
import { EVENT_BODY_COLUMN } from '../postgres/eventBodies.js';
import { pg } from '../postgres/ast.js';
import { BODY_COLUMN } from '../catalog.js';
import { exposeHotColumns, rowForRow } from './hot.js';
import type { EventRows, Range, Relation, Resolved, Scope } from './scope.js';

/** A range whose rows are events of one source: a source table or an event relation. */
export type EventCarrier = Extract<Range, { kind: 'source' }> | (Extract<Range, { kind: 'relation' }> & { eventSource: object });

export function isEventCarrier(range: Range): range is EventCarrier {
  return range.kind === 'source' || (range.kind === 'relation' && range.eventSource !== undefined);
}

/** The event carriers among one SELECT's FROM items (not its outer queries'). */
export function eventCarriers(scope: Scope): EventCarrier[] {
  return scope.ranges.filter(isEventCarrier);
}

/** Where a carrier's rows keep their event's `body`. */
export function carrierRows(range: EventCarrier): EventRows {
  return range.kind === 'source'
    ? { source: range.source, body: pg.column(range.alias, BODY_COLUMN) }
    : { source: range.eventSource, body: pg.column(range.alias, EVENT_BODY_COLUMN) };
}

/** The events a SELECT's rows are, when it reads exactly one carrier row for row. */
export function selectEvents(scope: Scope, select: Resolved['query']['body']): EventRows | undefined {
  if (!rowForRow(select)) return undefined;
  const carriers = eventCarriers(scope);
  return carriers.length === 1 ? carrierRows(carriers[0]) : undefined;
}

/**
 * A resolved query made ready to be read as a table: the hot leaves of its columns and, when its
 * rows are events, their `body` added as hidden output columns.
 */
export function asRelation(resolved: Resolved): Relation {
  const { events } = resolved;
  const { events: _events, ...r } = exposeHotColumns(resolved);
  const body = r.query.body;
  if (!events || !rowForRow(body) || body.targets.some((t) => t.name === EVENT_BODY_COLUMN)) return r;
  const targets = [...body.targets, { expr: events.body, name: EVENT_BODY_COLUMN }];
  return { ...r, query: { ...r.query, body: { ...body, targets } }, eventSource: events.source };
}
