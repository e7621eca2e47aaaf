/**
 * Where an alert may send (ALERT_WEBHOOK_HOSTS, SECURITY.md "Alert destinations"), and the one
 * HTTP POST that sends there.
 *
 * The destination is an admin's configuration, but the request leaves from inside the network,
 * so loopback, private, link-local and other non-public ranges are refused unless listed:
 *
 * - empty list: any public address;
 * - otherwise only what is listed: a host name (the URL's host, exactly), an IP address, a CIDR
 *   range, or `public` (any public address).
 *
 * The check is on the address connected to, not only on the name: the name is resolved once,
 * every address it gives is checked, and the connection goes to the checked address (node's
 * `lookup` option answers with it), so a name that resolves to 127.0.0.1, or one whose DNS answer
 * changes between the check and the connection, cannot route around the list. Redirects are not
 * followed (a 3xx is a failed delivery): a public receiver cannot bounce the request inward.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';

/** Address ranges that are not public: never reached unless listed. */
const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b:1::', 48],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');

/** An IPv4 address written as IPv6 (`::ffff:127.0.0.1`, `64:ff9b::7f00:1`) is checked as IPv4. */
function normalised(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower) ?? /^64:ff9b::(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return { address: mapped[1], family: 'ipv4' };
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
    return { address: [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.'), family: 'ipv4' };
  }
  return { address: lower, family: isIP(lower) === 6 ? 'ipv6' : 'ipv4' };
}

export function isPublicAddress(address: string): boolean {
  const a = normalised(address);
  return !NON_PUBLIC.check(a.address, a.family);
}

export class DestinationRefused extends Error {}

/** ALERT_WEBHOOK_HOSTS, read once (src/config.ts checked its entries). */
export class DestinationPolicy {
  private readonly names = new Set<string>();
  private readonly listed = new BlockList();
  private readonly anyPublic: boolean;

  constructor(entries: readonly string[]) {
    this.anyPublic = entries.length === 0 || entries.includes('public');
    for (const entry of entries) {
      if (entry === 'public') continue;
      const [address, bits] = entry.split('/');
      if (!isIP(address)) {
        this.names.add(entry.toLowerCase());
        continue;
      }
      const a = normalised(address);
      if (bits === undefined) this.listed.addAddress(a.address, a.family);
      else this.listed.addSubnet(a.address, Number(bits), a.family);
    }
  }

  /** Whether the URL's host name itself is listed (then whatever it resolves to is the admin's choice). */
  private nameListed(host: string): boolean {
    return this.names.has(host.toLowerCase());
  }

  /** Whether a connection to `address` (resolved from `host`) is allowed. */
  allows(host: string, address: string): boolean {
    if (this.nameListed(host)) return true;
    const a = normalised(address);
    if (this.listed.check(a.address, a.family)) return true;
    return this.anyPublic && isPublicAddress(address);
  }

  /**
   * A problem with a URL that shows without resolving it (a 422 when an alert is saved): not http(s),
   * or an IP address that is refused. Names are checked again, resolved, at every delivery.
   */
  urlProblem(raw: string): string | undefined {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'is not a URL';
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
    const host = hostOf(url);
    if (isIP(host) && !this.allows(host, host))
      return `goes to ${host}, which ALERT_WEBHOOK_HOSTS does not allow (loopback and private addresses must be listed)`;
    // A name not listed may still resolve to a listed address or range: that is known only when sending.
    if (!isIP(host) && !this.anyPublic && !this.nameListed(host) && this.listed.rules.length === 0)
      return `goes to ${host}, which is not in ALERT_WEBHOOK_HOSTS`;
    return undefined;
  }

  /** The address to connect to for `host`: the first allowed one it resolves to; DestinationRefused if none. */
  async resolve(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const answers = isIP(host) ? [{ address: host, family: isIP(host) as 4 | 6 }] : await dnsLookup(host, { all: true, verbatim: true });
    const allowed = answers.find((a) => this.allows(host, a.address));
    if (!allowed) {
      const seen = answers.map((a) => a.address).join(', ') || 'no address';
      throw new DestinationRefused(`${host} (${seen}) is not allowed by ALERT_WEBHOOK_HOSTS`);
    }
    return { address: allowed.address, family: allowed.family as 4 | 6 };
  }
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

export interface PostResult {
  status: number;
  /** The first bytes of the answer, for the run history. */
  body: string;
}

/**
 * POSTs `body` (JSON) to `rawUrl`, connecting only to an address the policy allows (resolved once,
 * pinned for the connection); rejects on a refused destination, a connection error or `timeoutMs`.
 * The status is the caller's to judge; redirects are not followed.
 */
export async function postJson(
  policy: DestinationPolicy,
  rawUrl: string,
  body: unknown,
  options: { timeoutMs: number; headers?: Record<string, string> },
): Promise<PostResult> {
  const url = new URL(rawUrl);
  const host = hostOf(url);
  const pinned = await policy.resolve(host);
  const lookup: LookupFunction = (_name, opts, callback) => {
    if ((opts as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const payload = Buffer.from(JSON.stringify(body));
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(payload.length),
          'User-Agent': 'logquery-alerts',
          ...options.headers,
        },
        timeout: options.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < 2048) chunks.push(c);
          size += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 500) }));
        res.on('error', reject);
      },
    );
    // The whole attempt, not only idle time between packets: a receiver that trickles bytes times out too.
    const deadline = setTimeout(() => req.destroy(new DeliveryTimeout(options.timeoutMs)), options.timeoutMs);
    req.on('timeout', () => req.destroy(new DeliveryTimeout(options.timeoutMs)));
    req.on('error', reject);
    req.on('close', () => clearTimeout(deadline));
    req.end(payload);
  });
}

export class DeliveryTimeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}
