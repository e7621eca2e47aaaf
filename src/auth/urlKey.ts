/**
 * The API key as a URL parameter, `?api_key=<key>`: accepted because the self-hosted stack's
 * log shipper configuration puts it there. It is a credential, not a parameter: it is taken out
 * of the query before anything else sees it (endpoint parameters, prepared-run and cache keys).
 */
import querystring from 'node:querystring';

export const API_KEY_PARAM = 'api_key';

/**
 * Splits a raw query string (`a=1&api_key=k&b=2`) into the key (the first non-empty `api_key`,
 * decoded) and the query without any `api_key` pair. Names are decoded as Express' query parser
 * decodes them (querystring), so `api%5Fkey` and `%61pi_key` are the key parameter here too, as
 * they are to every reader of `req.query`. `rest` is `raw` itself when there is none, so the
 * common case allocates nothing.
 */
export function splitUrlKey(raw: string): { key: string | undefined; rest: string } {
  if (!raw.includes(API_KEY_PARAM) && !raw.includes('%')) return { key: undefined, rest: raw };
  let key: string | undefined;
  const kept: string[] = [];
  for (const pair of raw.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (name !== API_KEY_PARAM && (!name.includes('%') || decode(name) !== API_KEY_PARAM)) {
      kept.push(pair);
      continue;
    }
    if (key === undefined && eq >= 0) {
      const value = decode(pair.slice(eq + 1)).trim();
      if (value !== '') key = value;
    }
  }
  return { key, rest: kept.join('&') };
}

/** Without the `api_key` parameter: what endpoint parameters are read from. */
export function withoutUrlKey<T extends Record<string, unknown>>(query: T): T {
  if (!Object.hasOwn(query, API_KEY_PARAM)) return query;
  const { [API_KEY_PARAM]: _key, ...rest } = query;
  return rest as T;
}

/** As querystring.parse decodes, which Express' "simple" query parser is (`+` is a space; malformed escapes kept). */
function decode(value: string): string {
  return querystring.unescape(value.replace(/\+/g, ' '));
}
