/**
 * A demo data set built from the sample events in seeds/fixtures (one real-shaped event per
 * source): varied paths, methods, status codes and projects over the last 8 days, so a
 * newcomer sees rows from both seeded endpoints at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../src/paths.js';
import { DEFAULT_SOURCES } from '../src/sources/defaults.js';

const FIXTURES_DIR = path.join(PROJECT_ROOT, 'seeds', 'fixtures');
export const DEMO_PROJECTS = ['default', 'demo-shop', 'demo-blog'];
const PATHS = [
  '/rest/v1/orders',
  '/rest/v1/users',
  '/storage/v1/object/public/avatar.png',
  '/auth/v1/token',
  '/auth/v1/user',
  '/realtime/v1/websocket',
  '/rest/v1/rpc/search',
  '/functions/v1/hello',
];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PATCH', 'DELETE'];
const STATUSES = [200, 200, 200, 200, 201, 204, 304, 400, 401, 404, 500, 503];
const SEVERITIES = ['LOG', 'LOG', 'LOG', 'WARNING', 'ERROR', 'FATAL'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a free-form sample event whose nested fields the generator rewrites
export function loadFixture(sourceName: string): Record<string, any> {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, `${sourceName}.json`), 'utf8'));
}

/** Deterministic pseudo-random numbers, so the demo looks the same on every machine. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Events per source: `edgeCount` edge requests, a tenth of that for every other source. */
export function demoEvents(nowMs: number, edgeCount = 3000): Map<string, object[]> {
  const random = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const span = 8 * 86_400_000;
  // Recent hours are denser, as in real traffic, so the hourly and minutely charts have rows.
  const when = () => new Date(nowMs - (random() < 0.3 ? random() * 3_600_000 : random() * span)).toISOString();
  const out = new Map<string, object[]>();

  for (const { name } of DEFAULT_SOURCES) {
    const sample = loadFixture(name);
    const count = name === 'cloudflare.logs.prod' ? edgeCount : Math.ceil(edgeCount / 10);
    const events: object[] = [];
    for (let i = 0; i < count; i++) {
      const project = pick(DEMO_PROJECTS);
      const event = structuredClone(sample);
      event.timestamp = when();
      if ('project' in event) event.project = project;
      const m = event.metadata;
      if (name === 'cloudflare.logs.prod') {
        const p = pick(PATHS),
          method = pick(METHODS),
          status = pick(STATUSES);
        const host = `${project}.supabase.co`;
        Object.assign(m.request, { path: p, method, host, url: `https://${host}${p}` });
        m.request.headers.host = host;
        m.response.status_code = status;
        m.response.origin_time = Math.floor(random() * 400);
        event.event_message = `${method} | ${status} | 37.5.20.${i % 255} | ${i.toString(16)} | https://${host}${p} | ${m.request.headers.user_agent}`;
      } else if (name === 'postgres.logs') {
        m.parsed.error_severity = pick(SEVERITIES);
        event.event_message = `${m.parsed.error_severity.toLowerCase()}: statement ${i}`;
      } else {
        // Auth request logs carry an HTTP status and a duration in nanoseconds as numbers (the
        // sample has placeholder text there); the dashboard's auth report casts them to INT64.
        if (name === 'gotrue.logs.prod') Object.assign(m, { status: pick(STATUSES), duration: Math.floor(random() * 5e8) });
        if ('project_ref' in m) m.project_ref = project;
        if ('project' in m) m.project = project;
        event.event_message = `${sample.event_message.slice(0, 80)} #${i}`;
      }
      events.push(event);
    }
    out.set(name, events);
  }
  return out;
}
