import type { Row } from '../api/client';
import { columnsOf, formatUtc, kindOf } from './values';

/** The rows; timestamps as UTC dates, records folded (open one to see it). */
export function ResultTable({ rows }: { rows: Row[] }) {
  if (!rows.length) return <p class="muted">No rows.</p>;
  const columns = columnsOf(rows);
  const kinds = Object.fromEntries(columns.map((c) => [c, kindOf(rows, c)]));
  return (
    <div class="table-wrap">
      <table class="results">
        <thead>
          <tr>
            {columns.map((c) => (
              <th class={kinds[c] === 'number' ? 'num' : ''}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr>
              {columns.map((c) => (
                <td class={kinds[c] === 'number' ? 'num' : ''}>
                  <Cell value={row[c]} timestamp={kinds[c] === 'timestamp'} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cell({ value, timestamp }: { value: unknown; timestamp: boolean }) {
  if (value === null || value === undefined) return <span class="null">null</span>;
  if (timestamp) return <span title={String(value)}>{formatUtc(value)}</span>;
  if (typeof value === 'object') {
    const size = Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
    return (
      <details class="record">
        <summary>{size}</summary>
        <pre>{JSON.stringify(value, null, 2)}</pre>
      </details>
    );
  }
  return <>{String(value)}</>;
}
