/**
 * The console's HTTP client: openapi-fetch typed by the service's own OpenAPI document
 * (schema.d.ts, `npm run openapi:types`). The API key lives in sessionStorage (gone when the tab
 * closes) and goes out only as the X-API-KEY header, never in a URL.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

const KEY_ITEM = 'logquery.apiKey';

export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (key: string) => sessionStorage.setItem(KEY_ITEM, key),
  clear: () => sessionStorage.removeItem(KEY_ITEM),
};

const withKey: Middleware = {
  onRequest({ request }) {
    const key = apiKey.get();
    if (key) request.headers.set('X-API-KEY', key);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, querySerializer: { object: { style: 'form', explode: true } } });
api.use(withKey);

export type Endpoint = components['schemas']['Endpoint'];
export type EndpointBody = components['schemas']['EndpointBody'];
export type ParameterDeclaration = components['schemas']['ParameterDeclaration'];
export type Source = components['schemas']['Source'];
export type PartitionCount = components['schemas']['PartitionCount'];
export type ApiError = components['schemas']['Error'];
export type ErrorDetail = ApiError['error']['errors'][number];
export type WhatWillRun = components['schemas']['WhatWillRun'];

/** What a caller may know of an endpoint: the management record for admins, else the OpenAPI `x-endpoint`. */
export interface EndpointSummary {
  name: string;
  description?: string | null;
  parameters: ParameterDeclaration[];
  max_rows?: number;
  cache_duration_seconds?: number;
  cache_warming_seconds?: number | null;
  sandboxable?: boolean;
  redact_pii?: boolean;
  enable_auth?: boolean;
  labels?: string | null;
  query?: string;
}

export type Row = Record<string, unknown>;

export interface RunOutcome {
  rows?: Row[];
  error?: ApiError['error'];
  status: number;
  cache: string | null;
  ms: number;
}

/** Runs an endpoint with its parameters (and a sandboxed `sql`) in the query string, as a caller would. */
export async function runEndpoint(name: string, params: Record<string, string>): Promise<RunOutcome> {
  const started = performance.now();
  const { data, error, response } = await api.GET('/api/endpoints/query/{idOrName}', {
    params: { path: { idOrName: name }, query: { params } },
  });
  const ms = performance.now() - started;
  const cache = response.headers.get('X-Cache');
  if (error) return { error: (error as ApiError).error, status: response.status, cache, ms };
  return { rows: data.result as Row[], status: response.status, cache, ms };
}

/** The endpoints this key may run: with admin the full records, else from the OpenAPI document. */
export async function listEndpoints(): Promise<{ admin: boolean; endpoints: EndpointSummary[] } | { error: ApiError['error'] }> {
  const managed = await api.GET('/api/endpoints');
  if (managed.data) return { admin: true, endpoints: managed.data as EndpointSummary[] };
  if (managed.response.status !== 403) return { error: (managed.error as ApiError).error };
  const doc = await api.GET('/api/openapi.json');
  if (!doc.data) return { error: (doc.error as ApiError).error };
  const endpoints = Object.values((doc.data as { paths: Record<string, { get?: { 'x-endpoint'?: EndpointSummary } }> }).paths)
    .map((p) => p.get?.['x-endpoint'])
    .filter((e): e is EndpointSummary => e !== undefined)
    .sort((a, b) => a.name.localeCompare(b.name));
  return { admin: false, endpoints };
}

/** `sql:3:17` or `query:3:17` → line 3, column 17 of that text. */
export function textLocation(
  detail: { location?: string } | undefined,
  field: 'sql' | 'query',
): { line: number; column: number } | undefined {
  const m = new RegExp(`^${field}:(\\d+):(\\d+)$`).exec(detail?.location ?? '');
  return m ? { line: Number(m[1]), column: Number(m[2]) } : undefined;
}
