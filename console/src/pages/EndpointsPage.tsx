import type { Session } from '../App';
import { linkProps } from '../router';

export function EndpointsPage({ session }: { session: Session }) {
  return (
    <section>
      <h2>Endpoints</h2>
      <table class="list endpoints">
        <thead>
          <tr>
            <th>Name</th>
            <th>Description</th>
            <th>Parameters</th>
            <th>Cache</th>
            <th>Warming</th>
            <th>Sandbox</th>
          </tr>
        </thead>
        <tbody>
          {session.endpoints.map((e) => (
            <tr data-endpoint={e.name}>
              <td>
                <a {...linkProps({ page: 'endpoint', name: e.name })}>{e.name}</a>
              </td>
              <td class="desc">{e.description || <span class="muted">—</span>}</td>
              <td>
                {e.parameters.map((p) => (
                  <code class={`param${p.required ? ' required' : ''}`} title={p.required ? 'required' : 'optional'}>
                    {p.name}
                  </code>
                ))}
              </td>
              <td>{e.cache_duration_seconds ? seconds(e.cache_duration_seconds) : <span class="muted">none</span>}</td>
              <td>{e.cache_warming_seconds ? `every ${seconds(e.cache_warming_seconds)}` : <span class="muted">none</span>}</td>
              <td>{e.sandboxable ? <span class="badge on">sql</span> : <span class="muted">off</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function seconds(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}
