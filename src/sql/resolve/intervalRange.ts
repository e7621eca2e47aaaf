/**
 * `INTERVAL '1-2 3 4:5:6.789' YEAR TO SECOND`: BigQuery's interval range literal (GoogleSQL's
 * "Interval type" reference). The string holds the parts from the first to the last unit named,
 * in up to three groups separated by a space, each with its own optional sign: `Y-M` (or `M` alone
 * from MONTH), `D`, and `H:M:S[.F]` (or its contiguous part from the first unit named). The
 * translator reads it here, so Postgres gets one unambiguous interval literal of signed parts
 * instead of its own reading of the text (which differs in the forms it accepts).
 */
import { SqlSyntaxError } from '../errors.js';

const ORDER = ['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND'] as const;
type Unit = (typeof ORDER)[number];

const INT = '(\\d+)';
const FRACTION = '(\\d+(?:\\.\\d{1,9})?)';

/** The Postgres interval literal of `text` read from `from` to `to`; a 400 naming the form when it does not match. */
export function intervalRangeLiteral(text: string, from: string, to: string, sql: string, pos: number): string {
  const first = ORDER.indexOf(from as Unit);
  const last = ORDER.indexOf(to as Unit);
  if (first < 0 || last < 0 || first >= last)
    throw new SqlSyntaxError(
      `INTERVAL … ${from} TO ${to} is not a range BigQuery has (from a larger unit to a smaller one of YEAR … SECOND)`,
      sql,
      pos,
    );
  const units = ORDER.slice(first, last + 1);
  const has = (u: Unit) => units.includes(u);

  const groups: Array<{ pattern: string; units: Unit[] }> = [];
  if (has('YEAR') && has('MONTH')) groups.push({ pattern: `([-+]?)${INT}-${INT}`, units: ['YEAR', 'MONTH'] });
  else if (has('MONTH')) groups.push({ pattern: `([-+]?)${INT}`, units: ['MONTH'] });
  if (has('DAY')) groups.push({ pattern: `([-+]?)${INT}`, units: ['DAY'] });
  const time = units.filter((u) => u === 'HOUR' || u === 'MINUTE' || u === 'SECOND');
  if (time.length) groups.push({ pattern: `([-+]?)${time.map((u) => (u === 'SECOND' ? FRACTION : INT)).join(':')}`, units: time });

  const form = groups.map((g) => g.units.map((u) => u[0]).join(g.units[0] === 'YEAR' ? '-' : ':')).join(' ');
  const match = new RegExp(`^\\s*${groups.map((g) => g.pattern).join(' +')}\\s*$`).exec(text);
  if (!match) throw new SqlSyntaxError(`INTERVAL '${text}' ${from} TO ${to} is not of the form '${form}'`, sql, pos);

  const parts: string[] = [];
  let at = 1;
  for (const group of groups) {
    const sign = match[at++] === '-' ? '-' : '';
    for (const unit of group.units) {
      const value = match[at++];
      if (unit === 'MONTH' && group.units.length === 2 && Number(value) > 11)
        throw new SqlSyntaxError(`INTERVAL '${text}': the month of a Y-M part is 0 to 11`, sql, pos);
      if ((unit === 'MINUTE' || unit === 'SECOND') && unit !== group.units[0] && Number(value) >= 60)
        throw new SqlSyntaxError(`INTERVAL '${text}': minutes and seconds after the first part are 0 to 59`, sql, pos);
      parts.push(`${sign}${value} ${unit.toLowerCase()}s`);
    }
  }
  return parts.join(' ');
}
