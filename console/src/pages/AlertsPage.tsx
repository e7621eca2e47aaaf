/**
 * Alerts (docs/ALERTS.md): the list, a form to create or edit one (the query in the SQL editor,
 * "Test now" showing the rows a run would send), and an alert's run history with "Run now".
 */
import { useEffect, useState } from 'preact/hooks';
import { api, textLocation, type ApiError, type ErrorDetail, type Row } from '../api/client';
import type { components } from '../api/schema';
import { ResultTable } from '../components/ResultTable';
import { SqlEditor } from '../components/SqlEditor';
import { linkProps, navigate } from '../router';

type Alert = components['schemas']['Alert'];
type AlertRun = components['schemas']['AlertRun'];

export function AlertsPage() {
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void api.GET('/api/alerts').then(({ data, error: e }) => (data ? setAlerts(data) : setError((e as ApiError).error.message)));
  }, []);
  if (error) return <p class="error-box">{error}</p>;
  if (!alerts) return <p class="muted">Loading…</p>;
  return (
    <section>
      <h2>
        Alerts <a {...linkProps({ page: 'new-alert' })}>New alert</a>
      </h2>
      {alerts.length === 0 && <p class="muted">No alert yet.</p>}
      <table class="list alerts">
        <thead>
          <tr>
            <th>Name</th>
            <th>Schedule</th>
            <th>Sends to</th>
            <th>Next run</th>
          </tr>
        </thead>
        <tbody>
          {alerts.map((a) => (
            <tr data-alert={a.name}>
              <td>
                <a {...linkProps({ page: 'alert', name: a.name })}>{a.name}</a>
              </td>
              <td>
                <code>{a.cron}</code> {!a.enabled && <span class="muted">disabled</span>}
              </td>
              <td>
                {[a.webhook_notification_url && 'webhook', a.slack_hook_url && 'Slack'].filter(Boolean).join(', ') || (
                  <span class="muted">nothing</span>
                )}
              </td>
              <td>{a.next_runs?.[0] ? new Date(a.next_runs[0]).toLocaleString() : <span class="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

interface Draft {
  name: string;
  description: string;
  query: string;
  cron: string;
  webhook_notification_url: string;
  slack_hook_url: string;
  enabled: boolean;
}

const EMPTY: Draft = {
  name: '',
  description: '',
  query: '',
  cron: '*/5 * * * *',
  webhook_notification_url: '',
  slack_hook_url: '',
  enabled: true,
};

/** Create (no `name`) or edit an alert, with its history below when it exists. */
export function AlertPage({ name }: { name?: string }) {
  const [alert, setAlert] = useState<Alert | null | undefined>(name ? undefined : null);
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [failure, setFailure] = useState<ApiError['error'] | null>(null);
  const [preview, setPreview] = useState<{ rows: Row[]; row_count: number } | null>(null);
  const [busy, setBusy] = useState(false);
  const [runs, setRuns] = useState<AlertRun[]>([]);

  const loadRuns = async (id: string) => {
    const { data } = await api.GET('/api/alerts/{idOrName}/runs', { params: { path: { idOrName: id } } });
    if (data) setRuns(data);
  };
  useEffect(() => {
    if (!name) return;
    void api.GET('/api/alerts/{idOrName}', { params: { path: { idOrName: name } } }).then(({ data }) => {
      setAlert(data ?? null);
      if (data) {
        setDraft({
          name: data.name,
          description: data.description ?? '',
          query: data.query,
          cron: data.cron,
          webhook_notification_url: data.webhook_notification_url ?? '',
          slack_hook_url: data.slack_hook_url ?? '',
          enabled: data.enabled,
        });
        void loadRuns(data.id);
      }
    });
  }, [name]);
  if (name && alert === undefined) return <p class="muted">Loading…</p>;
  if (name && alert === null) return <p class="error-box">No alert named “{name}”.</p>;

  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const problemAt = (field: string): ErrorDetail | undefined =>
    failure?.errors.find((d) => d.location === field || (field === 'query' && d.location?.startsWith('query')));
  const at = failure ? textLocation(failure.errors[0], 'query') : undefined;
  const queryMark = at && failure ? { ...at, message: failure.message } : undefined;
  const body = () => ({
    ...draft,
    webhook_notification_url: draft.webhook_notification_url.trim() || null,
    slack_hook_url: draft.slack_hook_url.trim() || null,
  });

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const { data, error } = alert
      ? await api.PUT('/api/alerts/{idOrName}', { params: { path: { idOrName: alert.id } }, body: body() as never })
      : await api.POST('/api/alerts', { body: body() as never });
    setBusy(false);
    if (error) return setFailure((error as ApiError).error);
    setFailure(null);
    setAlert(data);
    navigate({ page: 'alert', name: data.name });
  };
  const testNow = async () => {
    setBusy(true);
    const { data, error } = await api.POST('/api/alerts/preview', { body: { query: draft.query } });
    setBusy(false);
    if (error) return setFailure((error as ApiError).error);
    setFailure(null);
    setPreview(data as { rows: Row[]; row_count: number });
  };
  const runNow = async () => {
    if (!alert) return;
    setBusy(true);
    await api.POST('/api/alerts/{idOrName}/run', { params: { path: { idOrName: alert.id } } });
    setBusy(false);
    await loadRuns(alert.id);
  };
  const field = (label: string, key: keyof Draft, placeholder = '') => (
    <label>
      {label}
      <input
        name={key}
        value={draft[key] as string}
        placeholder={placeholder}
        onInput={(e) => set({ [key]: (e.currentTarget as HTMLInputElement).value })}
      />
      {problemAt(key) && <small class="problem">{problemAt(key)!.message}</small>}
    </label>
  );

  return (
    <section class="alert-page">
      <h2>{alert ? `Alert ${alert.name}` : 'New alert'}</h2>
      {failure && <p class="error-box">{failure.message}</p>}
      <form class="editor" onSubmit={save}>
        {field('Name', 'name')}
        {field('Description', 'description')}
        <label>Query (BigQuery SQL; the alert fires when it returns rows)</label>
        <SqlEditor name="query" value={draft.query} onInput={(query) => set({ query })} mark={queryMark} />
        {problemAt('query') && <small class="problem">{problemAt('query')!.message}</small>}
        {field('Schedule (cron, UTC)', 'cron', '*/5 * * * *')}
        {field('Webhook URL', 'webhook_notification_url', 'https://…')}
        {field('Slack incoming-webhook URL', 'slack_hook_url', 'https://hooks.slack.com/services/…')}
        <label class="check">
          <input
            type="checkbox"
            name="enabled"
            checked={draft.enabled}
            onChange={(e) => set({ enabled: (e.currentTarget as HTMLInputElement).checked })}
          />
          Runs on its schedule
        </label>
        <div class="actions">
          <button type="button" name="test" disabled={busy} onClick={() => void testNow()}>
            Test now
          </button>
          <button type="submit" name="save" disabled={busy}>
            {alert ? 'Save' : 'Create'}
          </button>
          {alert && (
            <button type="button" name="run" disabled={busy} onClick={() => void runNow()}>
              Run now
            </button>
          )}
        </div>
      </form>
      {preview && (
        <div class="preview">
          <h3>
            {preview.row_count === 0
              ? 'No rows: nothing would be sent'
              : `${preview.row_count} row${preview.row_count === 1 ? '' : 's'} would be sent`}
          </h3>
          {preview.rows.length > 0 && <ResultTable rows={preview.rows} />}
        </div>
      )}
      {alert && (
        <div class="runs">
          <h3>Runs</h3>
          {runs.length === 0 && <p class="muted">No run yet.</p>}
          <table class="list runs">
            <thead>
              <tr>
                <th>Time</th>
                <th>Trigger</th>
                <th>Duration</th>
                <th>Rows</th>
                <th>Outcome</th>
                <th>Delivery</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr data-run={r.id} data-outcome={r.outcome}>
                  <td>{new Date(r.scheduled_for ?? r.started_at).toLocaleString()}</td>
                  <td>{r.trigger}</td>
                  <td>{r.duration_ms === null || r.duration_ms === undefined ? '—' : `${r.duration_ms} ms`}</td>
                  <td>{r.row_count ?? '—'}</td>
                  <td title={r.error ?? ''}>{r.outcome}</td>
                  <td>
                    {r.delivery}
                    {r.deliveries.map((d) => (
                      <span class="muted">
                        {' '}
                        {d.target}: {d.status} after {d.attempts?.length ?? 0} attempt{d.attempts?.length === 1 ? '' : 's'}
                      </span>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
