import { useEffect, useState } from 'preact/hooks';
import { api, type ApiError, type PartitionCount, type Source } from '../api/client';
import { linkProps } from '../router';

export function SourcesPage() {
  const [sources, setSources] = useState<Source[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void api.GET('/api/sources').then(({ data, error }) => (data ? setSources(data) : setError((error as ApiError).error.message)));
  }, []);
  if (error) return <p class="error-box">{error}</p>;
  if (!sources) return <p class="muted">Loading…</p>;
  return (
    <section>
      <h2>Sources</h2>
      <table class="list sources">
        <thead>
          <tr>
            <th>Name</th>
            <th>Table</th>
            <th class="num">Fields</th>
            <th class="num">Retention</th>
          </tr>
        </thead>
        <tbody>
          {sources.map((s) => (
            <tr data-source={s.name}>
              <td>
                <a {...linkProps({ page: 'source', name: s.name })}>{s.name}</a>{' '}
                <a class="search-link" {...linkProps({ page: 'explorer', name: s.name })}>
                  search
                </a>
              </td>
              <td>
                <code>logs.{s.table_name}</code>
              </td>
              <td class="num">{countFields(s.schema)}</td>
              <td class="num">{s.retention_days} d</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One source: its inferred schema as a tree, and its events per day partition with retention. */
export function SourcePage({ name }: { name: string }) {
  const [source, setSource] = useState<Source | null>(null);
  const [partitions, setPartitions] = useState<PartitionCount[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const path = { params: { path: { idOrName: name } } };
    void api
      .GET('/api/sources/{idOrName}', path)
      .then(({ data, error }) => (data ? setSource(data) : setError((error as ApiError).error.message)));
    void api.GET('/api/sources/{idOrName}/partitions', path).then(({ data }) => data && setPartitions(data));
  }, [name]);
  if (error) return <p class="error-box">{error}</p>;
  if (!source) return <p class="muted">Loading…</p>;
  const most = Math.max(1, ...(partitions ?? []).map((p) => p.events));
  return (
    <section class="source">
      <h2>{source.name}</h2>
      <p>
        <a class="button" {...linkProps({ page: 'explorer', name: source.name })}>
          Search its logs
        </a>
      </p>
      <p class="settings">
        <span>
          table <code>logs.{source.table_name}</code>
        </span>
        <span>retention {source.retention_days} days</span>
      </p>
      <div class="two-columns">
        <div>
          <h3>Schema</h3>
          <ul class="tree">
            <SchemaTree schema={source.schema as Record<string, FieldSchema>} />
          </ul>
        </div>
        <div>
          <h3>Events per day</h3>
          {partitions && (
            <table class="list partitions">
              <thead>
                <tr>
                  <th>Day (UTC)</th>
                  <th class="num">Events</th>
                  <th />
                  <th>Dropped by retention</th>
                </tr>
              </thead>
              <tbody>
                {[...partitions].reverse().map((p) => (
                  <tr data-day={p.day}>
                    <td>{p.day}</td>
                    <td class="num">{p.events.toLocaleString('en')}</td>
                    <td class="bar-cell">
                      <span class="bar" style={{ width: `${(100 * p.events) / most}%` }} />
                    </td>
                    <td class="muted">{p.drops_at.slice(0, 10)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
    </section>
  );
}

interface FieldSchema {
  type: string;
  repeated: boolean;
  fields?: Record<string, FieldSchema>;
}

/** The inferred schema (src/sources/schema.ts): field → type, a RECORD with its own fields. */
function SchemaTree({ schema }: { schema: Record<string, FieldSchema> }) {
  return (
    <>
      {Object.entries(schema)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, field]) => {
          const type = `${field.repeated && field.type !== 'RECORD' ? 'ARRAY<' : ''}${field.type}${field.repeated && field.type !== 'RECORD' ? '>' : ''}`;
          return field.fields ? (
            <li>
              <details open={Object.keys(field.fields).length < 10}>
                <summary>
                  <span class="fname">{name}</span> <span class="type">{type}</span>
                </summary>
                <ul>
                  <SchemaTree schema={field.fields} />
                </ul>
              </details>
            </li>
          ) : (
            <li>
              <span class="fname">{name}</span> <span class="type">{type}</span>
            </li>
          );
        })}
    </>
  );
}

function countFields(schema: unknown): number {
  return Object.values((schema ?? {}) as Record<string, FieldSchema>).reduce((n, f) => n + 1 + (f.fields ? countFields(f.fields) : 0), 0);
}
