/**
 * Event rows: which tables in scope hold the events of one source, for names that none of their
 * columns answer to. On the original's Postgres backend every name reads the event's JSON, so an
 * unknown one comes back NULL; Studio's log pages rely on it (`select id from
 * etl_replication_logs where pipeline_id = 42` over `logs.all`, whose CTEs select `id,
 * timestamp, event_message, metadata` of one source).
 *
 * A source table is a carrier of events; so is a plain SELECT row for row over exactly one
 * carrier (unnested records beside it are fine), read as a CTE or derived table (an endpoint read as a table is not: a change that drops a column its readers use must stay a 422). With
 * one carrier in scope, an unknown bare name is a field of its events: of a source table, the
 * event's own field, NULL until events bring it (resolve/names.ts); of a relation, NULL with a
 * warning, never the event's value: the relation's select list is what its author chose to show
 * (a sandboxed caller reads an endpoint's CTEs and nothing more). With two carriers the name is a
 * guess, so it stays an error that asks to qualify it; over anything else (GROUP BY, DISTINCT,
 * UNION, aggregates) the columns are all there is, and it stays an error too.
 */
import type { SourceTable } from '../catalog.js';
import type { PgQuery } from '../postgres/ast.js';
import { rowForRow } from './hot.js';
import type { Range, Scope } from './scope.js';

/** A range whose rows are events of one source: a source table or a relation of its events. */
export type EventCarrier =
  Extract<Range, { kind: 'source' }> | (Extract<Range, { kind: 'relation' }> & { readonly eventSource: SourceTable });

export function isEventCarrier(range: Range): range is EventCarrier {
  return range.kind === 'source' || (range.kind === 'relation' && range.eventSource !== undefined);
}

/** The event carriers among one SELECT's FROM items (not its outer queries'). */
export function eventCarriers(scope: Scope): EventCarrier[] {
  return scope.ranges.filter(isEventCarrier);
}

export function carrierSource(range: EventCarrier): SourceTable {
  return range.kind === 'source' ? range.source : range.eventSource;
}

/** The source whose events a SELECT's rows are, when it reads exactly one carrier row for row. */
export function selectEvents(scope: Scope, select: PgQuery['body']): SourceTable | undefined {
  if (!rowForRow(select)) return undefined;
  const carriers = eventCarriers(scope);
  return carriers.length === 1 ? carrierSource(carriers[0]) : undefined;
}
