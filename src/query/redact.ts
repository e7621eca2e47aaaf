/**
 * PII redaction (docs/API.md, "PII redaction"): IPv4 and IPv6 addresses inside every string
 * value of a result, at any depth, become `REDACTED`. Keys, numbers and booleans are untouched.
 *
 * IPv6 candidates are found loosely (hex digits, colons and dots between word boundaries) and
 * confirmed with node's own parser, so full, compressed and IPv4-mapped forms are caught while
 * times (`14:36:26`), MAC addresses and words like `deadbeef` or `std::vector` are not.
 */
import { isIPv6 } from 'node:net';

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
/** Not part of a longer dotted number: `1.2.3.4.5` and `v1.2.3.4.5` are version strings. */
const IPV4 = new RegExp(`(?<![\\d.])(?<!\\d\\.)${OCTET}(?:\\.${OCTET}){3}(?!\\.?\\d)`, 'g');
const IPV6_CANDIDATE = /(?<![0-9A-Za-z_:.])(?=[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]{2,}(?![0-9A-Za-z_:])/g;
const REPLACEMENT = 'REDACTED';

export function redactString(value: string): string {
  let out = value;
  if (out.includes(':')) {
    out = out.replace(IPV6_CANDIDATE, (candidate) => {
      const trimmed = candidate.replace(/\.+$/, ''); // a sentence may end right after an address
      return isIPv6(trimmed) ? REPLACEMENT + candidate.slice(trimmed.length) : candidate;
    });
  }
  if (out.includes('.')) out = out.replace(IPV4, REPLACEMENT);
  return out;
}

/** A deep copy of `value` with every string redacted. */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactString(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v);
    return out;
  }
  return value;
}
