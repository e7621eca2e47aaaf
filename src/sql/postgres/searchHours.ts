/**
 * A rewrite for speed: a query that searches (a `LIKE`, `ILIKE`, `~` or `~*` test, the forms of
 * search.ts) gets, on each log table it reads, the split of that table's time by the search hours
 * (src/sql/catalog.ts, "search hours"), one tautology per day that has hours over:
 *
 *   t."timestamp" <@ '[h0,h1)'::tstzrange                    -- the day's first hour
 *   OR t."timestamp" < day                                   -- every day before it
 *   OR t."timestamp" >= hn                                   -- the hour not over, and later days
 *   OR t."timestamp" <@ '[h1,h2)'::tstzrange OR …            -- the other hours over
 *   OR (t."timestamp" >= hn-1 AND t."timestamp" < hn AND t."timestamp" <@ '[hn-1,hn)'::tstzrange)
 *
 * Why: the open day has no whole-day trigram index (ingest would pay ~150 entries per event), but
 * each of its hours that is over has a partial one, `WHERE "timestamp" <@ '[h,h+1h)'::tstzrange`
 * (src/storage/indexUpkeep.ts), and Postgres only uses a partial index for a clause that implies
 * its predicate. With this OR among the scan's restrictions it builds a BitmapOr: each hour's
 * partial index with the search test, the hour not over through the `(project, timestamp)` index
 * (indxpath.c, generate_bitmap_or_paths / build_paths_for_OR). Measured: BENCHMARKS.md, "Search".
 *
 * Same rows: `timestamp` is NOT NULL in every log table (storage/logTables.ts), and the arms cover
 * every instant (before the day, each hour over, from the first hour not over on), so the OR is
 * true on every row. It goes into the WHERE of a SELECT whose FROM reads the table as an inner
 * item only: on the nullable side of an outer join a NULL `timestamp` would make it NULL. A
 * translation made at another hour (a cached one) has other boundaries: still a tautology, the
 * hours it does not name are read as they would be without it.
 *
 * Why this shape: Postgres gives up a BitmapOr at the first arm no index serves. The first arm is
 * the `<@` of the day's first hour, which only that partial index serves: on any other partition
 * (older days with their whole-day index, a day whose hourly indexes are dropped) the planner
 * stops there, at the cost of one proof, and plans the scan as before; it does not estimate `<@`
 * of an element (a constant selectivity), so the many arms cost little. The last hour over may
 * not be indexed yet (the upkeep builds each a few minutes after it ends): its arm also carries the
 * plain range, which the btree indexes serve until then. The open day's rows, where the OR would be
 * evaluated row by row (only when the plan does not use it), meet the day's own arms last.
 */
import { SEARCH_HOUR_MS, searchHourLiteral, searchHourRange, type SearchDay, type SearchHours } from '../catalog.js';
import { forEachNode, mapNodes } from '../walk.js';
import { pg, type PgExpr, type PgFrom, type PgOp, type PgQuery, type PgTable } from './ast.js';
import { SEARCH_OPERATORS } from './search.js';

/**
 * `query` with the hour split on every log table read where it searches; as it is without search
 * hours or a search an index serves (`indexServes`: search.ts, a word in most messages is scanned).
 */
export function splitSearchByHour(query: PgQuery, hours: SearchHours | undefined, indexServes: (op: PgOp) => boolean): PgQuery {
  if (!hours?.days.length || !searches(query, indexServes)) return query;
  return mapNodes(query, (n) => {
    if (n.kind !== 'query') return n;
    const q = n as unknown as PgQuery;
    if (q.body.kind !== 'select' || !q.body.from) return q;
    const tables = innerLogTables(q.body.from);
    if (!tables.length) return q;
    const split = tables.flatMap((t) => hours.days.map((day) => dayTautology(pg.column(t.alias, 'timestamp'), day)));
    return { ...q, body: { ...q.body, where: pg.and(...(q.body.where ? [q.body.where] : []), ...split) } };
  });
}

function searches(query: PgQuery, indexServes: (op: PgOp) => boolean): boolean {
  let found = false;
  forEachNode(query, (n) => {
    if (n.kind === 'op' && SEARCH_OPERATORS.has((n as unknown as PgOp).op) && indexServes(n as unknown as PgOp)) found = true;
  });
  return found;
}

/** The log tables (the only tables named with a schema: resolve/from.ts) of a FROM clause, but those an outer join may give NULLs for. */
function innerLogTables(item: PgFrom, nullable = false): PgTable[] {
  if (item.kind === 'join')
    return [
      ...innerLogTables(item.left, nullable || item.type === 'RIGHT' || item.type === 'FULL'),
      ...innerLogTables(item.right, nullable || item.type === 'LEFT' || item.type === 'FULL'),
    ];
  return item.kind === 'table' && item.schema !== undefined && !nullable ? [item] : [];
}

/** The OR of the module comment, for one day's hours over (consecutive from the day's first). */
export function dayTautology(ts: PgExpr, day: SearchDay): PgExpr {
  const at = (ms: number) => pg.cast(pg.literal(searchHourLiteral(ms)), 'timestamptz');
  const within = (h: number) => pg.op('<@', ts, pg.cast(pg.literal(searchHourRange(h)), 'tstzrange'));
  const [first, ...rest] = day.hours;
  const last = rest.pop();
  const arms: PgExpr[] = [within(first), pg.op('<', ts, at(day.dayMs)), pg.op('>=', ts, at((last ?? first) + SEARCH_HOUR_MS))];
  arms.push(...rest.map(within));
  if (last !== undefined) arms.push(pg.and(pg.op('>=', ts, at(last)), pg.op('<', ts, at(last + SEARCH_HOUR_MS)), within(last)));
  return pg.or(...arms);
}
