/**
 * security: the response headers a browser needs to keep the console and the API's answers from
 * being framed, sniffed into another type, or used to run script (issue 25, finding 9), the
 * helmet defaults that matter here, without the package: a few constant headers.
 *
 * Every answer, JSON included, carries API_HEADERS from a pipeline step (src/app.ts), so the GET
 * fast path of cache hits sends them too. The API never serves a document, so its policy allows
 * nothing (`default-src 'none'`): an answer opened in a browser tab, or an error message that
 * echoes input, can run nothing and load nothing. The console's page replaces that policy with
 * CONSOLE_CSP (src/console/routes.ts).
 *
 * Not sent: Strict-Transport-Security (the service speaks plain HTTP; TLS ends at a proxy, which
 * should send it), and CORS headers, which the endpoint query routes add for themselves
 * (src/endpoints/queryRoutes.ts).
 */
import type { ServerResponse } from 'node:http';
import type { PipelineStep } from './pipeline.js';

/**
 * The console's Content-Security-Policy. The Vite build emits no inline script or style (one
 * module script and one stylesheet under /assets, checked by test/console/console.test.ts, which
 * also fails on any violation the browser reports while the pages are used). Styles set from
 * script (Preact's `style` objects, uPlot) go through the CSSOM, which `style-src 'self'` allows.
 * `img-src data:` is for images uPlot and the browser make from data URLs; `connect-src 'self'`
 * covers fetch and the live tail's streaming fetch.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** On every answer; the console's page overrides Content-Security-Policy. */
export const API_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': API_CSP,
  // No framing by any origin (frame-ancestors above; this header for browsers that predate it).
  'X-Frame-Options': 'DENY',
  // A JSON answer is never read as HTML or script, whatever it holds.
  'X-Content-Type-Options': 'nosniff',
  // Console URLs name endpoints and sources, and a caller's `sql` or `api_key` may be in an API
  // URL: never sent to another site.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'X-Permitted-Cross-Domain-Policies': 'none',
};

const ENTRIES = Object.entries(API_HEADERS);

export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of ENTRIES) res.setHeader(name, value);
}

/** The first step of the pipeline, so refusals of later steps (401, 429) carry the headers too. */
export function securityHeadersStep(): PipelineStep {
  return {
    name: 'security headers',
    run(exchange) {
      setSecurityHeaders(exchange.res);
    },
  };
}
