import { useState } from 'preact/hooks';
import { api, textLocation, type ApiError, type EndpointBody, type ErrorDetail, type ParameterDeclaration } from '../api/client';
import type { Session } from '../App';
import { SqlEditor } from '../components/SqlEditor';
import { navigate } from '../router';

interface Draft {
  name: string;
  description: string;
  query: string;
  parameters: Array<{ name: string; required: boolean; allowed: string; description: string }>;
  declare: boolean;
  max_rows: string;
  cache_duration_seconds: string;
  cache_warming_seconds: string;
  sandboxable: boolean;
  redact_pii: boolean;
}

const EMPTY: Draft = {
  name: '',
  description: '',
  query: '',
  parameters: [],
  declare: false,
  max_rows: '1000',
  cache_duration_seconds: '0',
  cache_warming_seconds: '',
  sandboxable: false,
  redact_pii: false,
};

/** Create (no `name`) or edit an endpoint; the service's 422 problems are shown where they are. */
export function EndpointEditor({ session, name }: { session: Session; name?: string }) {
  const existing = name ? session.endpoints.find((e) => e.name === name) : undefined;
  const [draft, setDraft] = useState<Draft>(() =>
    existing
      ? {
          name: existing.name,
          description: existing.description ?? '',
          query: existing.query ?? '',
          parameters: existing.parameters.map((p) => ({
            name: p.name,
            required: p.required ?? false,
            allowed: (p.allowed_values ?? []).join(', '),
            description: p.description ?? '',
          })),
          declare: true,
          max_rows: String(existing.max_rows ?? 1000),
          cache_duration_seconds: String(existing.cache_duration_seconds ?? 0),
          cache_warming_seconds: existing.cache_warming_seconds ? String(existing.cache_warming_seconds) : '',
          sandboxable: existing.sandboxable ?? false,
          redact_pii: existing.redact_pii ?? false,
        }
      : EMPTY,
  );
  const [failure, setFailure] = useState<ApiError['error'] | null>(null);
  const [saving, setSaving] = useState(false);
  if (name && !existing) return <p class="error-box">No endpoint named “{name}”.</p>;

  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch });
  const problemAt = (field: string): ErrorDetail | undefined =>
    failure?.errors.find((d) => d.location === field || d.location?.startsWith(`${field}.`) || d.location?.startsWith(`${field}[`));

  const body = (): EndpointBody => ({
    name: draft.name,
    description: draft.description,
    query: draft.query,
    ...(draft.declare
      ? {
          parameters: draft.parameters.map((p): ParameterDeclaration => ({
            name: p.name,
            required: p.required,
            allowed_values: p.allowed.trim() ? p.allowed.split(',').map((v) => v.trim()) : null,
            description: p.description,
          })),
        }
      : {}),
    max_rows: Number(draft.max_rows),
    cache_duration_seconds: Number(draft.cache_duration_seconds),
    cache_warming_seconds: draft.cache_warming_seconds.trim() ? Number(draft.cache_warming_seconds) : null,
    sandboxable: draft.sandboxable,
    redact_pii: draft.redact_pii,
    // Not edited here: kept as they are (PUT gives an omitted field its default).
    enable_auth: existing?.enable_auth ?? true,
    language: 'bq_sql',
    labels: existing?.labels ?? null,
  });
  const save = async (e: Event) => {
    e.preventDefault();
    setSaving(true);
    const answer = existing
      ? await api.PUT('/api/endpoints/{idOrName}', { params: { path: { idOrName: existing.name } }, body: body() as never })
      : await api.POST('/api/endpoints', { body: body() as never });
    setSaving(false);
    if (answer.error) return setFailure((answer.error as ApiError).error);
    setFailure(null);
    await session.reload();
    navigate({ page: 'endpoint', name: answer.data!.name });
  };

  const queryMark = failure && textLocation(failure.errors[0], 'query');
  const field = (label: string, key: keyof Draft, attrs: Record<string, unknown> = {}) => (
    <label class={problemAt(key) ? 'invalid' : ''}>
      <span>{label}</span>
      <input name={key} value={draft[key] as string} onInput={(e) => set({ [key]: e.currentTarget.value })} {...attrs} />
      {problemAt(key) && <small class="problem">{problemAt(key)!.message}</small>}
    </label>
  );
  const checkbox = (label: string, key: 'sandboxable' | 'redact_pii') => (
    <label class="inline">
      <input type="checkbox" name={key} checked={draft[key]} onChange={(e) => set({ [key]: e.currentTarget.checked })} /> {label}
    </label>
  );

  return (
    <section class="editor">
      <h2>{existing ? `Edit ${existing.name}` : 'New endpoint'}</h2>
      <form onSubmit={save}>
        <div class="grid">
          {field('Name', 'name', { placeholder: 'errors.by-hour' })}
          {field('Description', 'description')}
        </div>
        <div class={`field${problemAt('query') || queryMark ? ' invalid' : ''}`}>
          <span class="label">Query (BigQuery SQL, @parameters)</span>
          <SqlEditor
            name="query"
            value={draft.query}
            onInput={(query) => set({ query })}
            rows={10}
            mark={queryMark ? { ...queryMark, message: failure!.message } : undefined}
          />
          {problemAt('query') && !queryMark && <small class="problem">{problemAt('query')!.message}</small>}
        </div>
        <fieldset class={problemAt('parameters') ? 'invalid' : ''}>
          <legend>
            <label class="inline">
              <input type="checkbox" checked={draft.declare} onChange={(e) => set({ declare: e.currentTarget.checked })} /> Declare
              parameters (otherwise every @name, optional)
            </label>
          </legend>
          {draft.declare && (
            <>
              {draft.parameters.map((p, i) => {
                const update = (patch: Partial<typeof p>) =>
                  set({ parameters: draft.parameters.map((q, j) => (j === i ? { ...q, ...patch } : q)) });
                return (
                  <div class="param-row">
                    <input placeholder="name" value={p.name} onInput={(e) => update({ name: e.currentTarget.value })} />
                    <label class="inline">
                      <input type="checkbox" checked={p.required} onChange={(e) => update({ required: e.currentTarget.checked })} />{' '}
                      required
                    </label>
                    <input
                      placeholder="allowed values, comma separated"
                      value={p.allowed}
                      onInput={(e) => update({ allowed: e.currentTarget.value })}
                    />
                    <input
                      placeholder="description"
                      value={p.description}
                      onInput={(e) => update({ description: e.currentTarget.value })}
                    />
                    <button type="button" class="link" onClick={() => set({ parameters: draft.parameters.filter((_, j) => j !== i) })}>
                      remove
                    </button>
                  </div>
                );
              })}
              <button
                type="button"
                class="secondary small"
                onClick={() => set({ parameters: [...draft.parameters, { name: '', required: false, allowed: '', description: '' }] })}
              >
                Add parameter
              </button>
            </>
          )}
          {problemAt('parameters') && <small class="problem">{problemAt('parameters')!.message}</small>}
        </fieldset>
        <div class="grid four">
          {field('Max rows', 'max_rows', { type: 'number' })}
          {field('Cache seconds (0: none)', 'cache_duration_seconds', { type: 'number' })}
          {field('Warming seconds (empty: none)', 'cache_warming_seconds', { type: 'number' })}
          <div class="checks">
            {checkbox('Sandboxable', 'sandboxable')}
            {checkbox('Redact PII', 'redact_pii')}
          </div>
        </div>
        {failure && !(queryMark && failure.errors.length === 1) && (
          <div class="error-box problems">
            <strong>{failure.message}</strong>
            {failure.errors.length > 1 && (
              <ul>
                {failure.errors.map((d) => (
                  <li>
                    <code>{d.location}</code> {d.message}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
        <div class="actions">
          <button type="submit" disabled={saving}>
            {existing ? 'Save' : 'Create'}
          </button>
        </div>
      </form>
    </section>
  );
}
