import { useState } from 'preact/hooks';
import { api, runEndpoint, textLocation, type ApiError, type RunOutcome, type WhatWillRun } from '../api/client';
import type { Session } from '../App';
import { Chart } from '../components/Chart';
import { ResultTable } from '../components/ResultTable';
import { SqlEditor } from '../components/SqlEditor';
import { linkProps } from '../router';
import { seconds } from './EndpointsPage';

/** One endpoint: a form of its parameters, Run, the rows, a chart, the cache outcome and copy as curl. */
export function EndpointPage({ session, name }: { session: Session; name: string }) {
  const endpoint = session.endpoints.find((e) => e.name === name);
  // The form starts from the endpoint's defaults on the first render (App mounts one page per
  // endpoint, keyed by name), so nothing resets it after a user has begun typing.
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries((endpoint?.parameters ?? []).map((p) => [p.name, p.allowed_values?.[0] ?? ''])),
  );
  const [sql, setSql] = useState('');
  const [outcome, setOutcome] = useState<RunOutcome | null>(null);
  const [running, setRunning] = useState(false);
  const [plan, setPlan] = useState<WhatWillRun | ApiError['error'] | null>(null);
  const [copied, setCopied] = useState(false);

  if (!endpoint) return <p class="error-box">No endpoint named “{name}” for this key.</p>;

  const params = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(values)) if (v !== '') out[k] = v;
    if (sql.trim()) out.sql = sql;
    return out;
  };
  const run = async (e?: Event) => {
    e?.preventDefault();
    setRunning(true);
    setOutcome(await runEndpoint(endpoint.name, params()));
    setRunning(false);
  };
  const showPlan = async () => {
    const { data, error } = await api.GET('/api/endpoints/{idOrName}/sql', {
      params: { path: { idOrName: endpoint.name }, query: { explain: 'true', params: params() } },
    });
    setPlan(data ?? (error as ApiError).error);
  };
  const curl = curlOf(endpoint.name, params());
  const copy = async () => {
    await navigator.clipboard?.writeText(curl).catch(() => undefined);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };

  const failure = outcome?.error;
  const sqlMark = failure ? textLocation(failure.errors[0], 'sql') : undefined;
  const paramProblem = (p: string) => failure?.errors.find((d) => d.location === p);

  return (
    <section class="endpoint">
      <div class="title-row">
        <h2>{endpoint.name}</h2>
        {session.admin && (
          <a class="button secondary" {...linkProps({ page: 'edit', name: endpoint.name })}>
            Edit
          </a>
        )}
      </div>
      {endpoint.description && <p class="muted">{endpoint.description}</p>}
      <p class="settings">
        <span>max rows {endpoint.max_rows}</span>
        <span>cache {endpoint.cache_duration_seconds ? seconds(endpoint.cache_duration_seconds) : 'none'}</span>
        <span>warming {endpoint.cache_warming_seconds ? `every ${seconds(endpoint.cache_warming_seconds)}` : 'none'}</span>
        <span>sandboxing {endpoint.sandboxable ? 'on' : 'off'}</span>
        {endpoint.redact_pii && <span>redacts PII</span>}
      </p>
      <form class="run-form" onSubmit={run}>
        <div class="params">
          {endpoint.parameters.map((p) => (
            <label class={paramProblem(p.name) ? 'invalid' : ''}>
              <span>
                {p.name}
                {p.required && <em> required</em>}
              </span>
              {p.allowed_values?.length ? (
                <select
                  name={p.name}
                  value={values[p.name] ?? ''}
                  onChange={(e) => setValues({ ...values, [p.name]: e.currentTarget.value })}
                >
                  {!p.required && <option value="">(none)</option>}
                  {p.allowed_values.map((v) => (
                    <option value={v}>{v}</option>
                  ))}
                </select>
              ) : (
                <input
                  name={p.name}
                  value={values[p.name] ?? ''}
                  placeholder={p.description || ''}
                  onInput={(e) => setValues({ ...values, [p.name]: e.currentTarget.value })}
                />
              )}
              {p.description && <small>{p.description}</small>}
              {paramProblem(p.name) && <small class="problem">{paramProblem(p.name)!.message}</small>}
            </label>
          ))}
        </div>
        {endpoint.sandboxable && (
          <div class="sandbox">
            <span class="label">sql — a SELECT over the endpoint's CTEs (optional)</span>
            <SqlEditor name="sql" value={sql} onInput={setSql} rows={4} mark={sqlMark && { ...sqlMark, message: failure!.message }} />
          </div>
        )}
        <div class="actions">
          <button type="submit" disabled={running}>
            {running ? 'Running…' : 'Run'}
          </button>
          <button type="button" class="secondary" onClick={copy}>
            {copied ? 'Copied' : 'Copy as curl'}
          </button>
          {session.admin && (
            <button type="button" class="secondary" onClick={showPlan}>
              SQL &amp; plan
            </button>
          )}
        </div>
      </form>
      <pre class="curl">{curl}</pre>
      {plan && <PlanView plan={plan} />}
      {outcome && (
        <div class="outcome">
          <p class="meta">
            <span class={`status s${Math.floor(outcome.status / 100)}`}>{outcome.status}</span>
            {outcome.cache && <span class="x-cache">X-Cache: {outcome.cache}</span>}
            <span class="time">{outcome.ms.toFixed(0)} ms</span>
            {outcome.rows && <span class="count">{outcome.rows.length} rows</span>}
          </p>
          {failure && !sqlMark && <p class="error-box">{failure.message}</p>}
          {outcome.rows && <Chart rows={outcome.rows} />}
          {outcome.rows && <ResultTable rows={outcome.rows} />}
        </div>
      )}
    </section>
  );
}

function PlanView({ plan }: { plan: WhatWillRun | ApiError['error'] }) {
  if ('code' in plan) return <p class="error-box">{plan.message}</p>;
  return (
    <div class="plan">
      <h3>Postgres SQL</h3>
      <pre class="sql">{plan.sql}</pre>
      {plan.parameters.length > 0 && (
        <p class="muted">
          {plan.parameters.map((p, i) => (
            <code>
              ${i + 1} = {p.value === null || p.value === undefined ? 'NULL' : JSON.stringify(p.value)}{' '}
            </code>
          ))}
        </p>
      )}
      {plan.plan !== undefined && (
        <>
          <h3>EXPLAIN</h3>
          <pre class="explain">{explainText(plan.plan)}</pre>
        </>
      )}
    </div>
  );
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Total Cost'?: number;
  'Plan Rows'?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN (FORMAT JSON) as the indented text psql shows. */
function explainText(plan: unknown): string {
  const root = (plan as Array<{ Plan: PlanNode }>)?.[0]?.Plan;
  if (!root) return JSON.stringify(plan, null, 2);
  const lines: string[] = [];
  const walk = (n: PlanNode, depth: number) => {
    const on = n['Relation Name'] ? ` on ${n['Relation Name']}` : n['Index Name'] ? ` using ${n['Index Name']}` : '';
    lines.push(`${'  '.repeat(depth)}${depth ? '-> ' : ''}${n['Node Type']}${on}  (cost=${n['Total Cost']} rows=${n['Plan Rows']})`);
    for (const c of n.Plans ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  return lines.join('\n');
}

/** The same call for a terminal; the key comes from the environment, so the command can be shared. */
function curlOf(name: string, params: Record<string, string>): string {
  const query = new URLSearchParams(params).toString();
  const url = `${location.origin}/api/endpoints/query/${encodeURIComponent(name)}${query ? `?${query}` : ''}`;
  return `curl -H "X-API-KEY: $LOGQUERY_API_KEY" '${url.replaceAll("'", "'\\''")}'`;
}
