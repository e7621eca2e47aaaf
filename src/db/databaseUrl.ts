/**
 * DATABASE_URL in libpq's multi-host form: `postgres://user:pw@h1:5432,h2:5433/db?target_session_attrs=read-write`.
 * node-postgres reads one host per URL, so the list is split into one single-host URL per host
 * (same credentials, database and options), and src/db/primary.ts finds the one that accepts
 * writes. A URL with one host and no `target_session_attrs` is returned as it is: nothing changes
 * for it.
 */

export interface DatabaseHosts {
  /** One single-host URL per host, in the order given, without `target_session_attrs`. */
  readonly urls: readonly string[];
  /** Several hosts, or `target_session_attrs` read-write/primary: look for the primary (HA mode). */
  readonly findPrimary: boolean;
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/)((?:[^@/?#]*@)?)([^/?#]*)(.*)$/i;
const HOST_PORT = /^(\[[^\]]+\]|[^:[\]]*)(?::(\d+))?$/;
/** The values libpq accepts that mean "the server that takes writes". */
const READ_WRITE = new Set(['read-write', 'primary']);

/** Splits `raw` (a postgres:// URL); throws an Error naming what is wrong. */
export function splitDatabaseUrl(raw: string): DatabaseHosts {
  const parts = URL_PARTS.exec(raw);
  if (!parts) return { urls: [raw], findPrimary: false };
  const [, scheme, userinfo, hostList, rest] = parts;
  const queryAt = rest.indexOf('?');
  const params = new URLSearchParams(queryAt < 0 ? '' : rest.slice(queryAt + 1));
  const attrs = params.get('target_session_attrs');
  const hosts = hostList.split(',');
  if (hosts.length === 1 && attrs === null) return { urls: [raw], findPrimary: false };
  if (attrs !== null && attrs !== 'any' && !READ_WRITE.has(attrs))
    throw new Error(`target_session_attrs=${attrs} is not supported: the service writes, use read-write (or any)`);
  params.delete('target_session_attrs');
  const query = params.toString();
  const tail = (queryAt < 0 ? rest : rest.slice(0, queryAt)) + (query ? `?${query}` : '');
  const urls = hosts.map((entry) => {
    const hp = HOST_PORT.exec(entry.trim());
    if (!hp || !hp[1]) throw new Error(`"${entry}" in the host list is not host or host:port`);
    return `${scheme}${userinfo}${hp[1]}:${hp[2] ?? '5432'}${tail}`;
  });
  return { urls, findPrimary: hosts.length > 1 || (attrs !== null && READ_WRITE.has(attrs)) };
}

/** `host:port` of a single-host URL (for logs and metric labels: never the credentials). */
export function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || '5432'}`;
}

/**
 * `raw` (single host or a host list) with `-c search_path=<schema>` added to its startup
 * `options`: every connection made from it then finds the service's own tables in `schema`
 * (DATABASE_SCHEMA; docs/MIGRATING.md). `public` leaves the URL as it is.
 */
export function withSearchPath(raw: string, schema: string): string {
  if (schema === 'public') return raw;
  const queryAt = raw.indexOf('?');
  const params = new URLSearchParams(queryAt < 0 ? '' : raw.slice(queryAt + 1));
  params.set('options', [params.get('options'), `-c search_path=${schema}`].filter(Boolean).join(' '));
  return `${queryAt < 0 ? raw : raw.slice(0, queryAt)}?${params.toString()}`;
}

/**
 * The startup options of a connection: those of its URL and `extra`, together (pg takes an
 * explicit `options` instead of the URL's, which would lose the search_path of withSearchPath).
 */
export function startupOptions(url: string, extra?: string): string | undefined {
  const queryAt = url.indexOf('?');
  const own = queryAt < 0 ? null : new URLSearchParams(url.slice(queryAt + 1)).get('options');
  const all = [own, extra].filter(Boolean).join(' ');
  return all || undefined;
}
