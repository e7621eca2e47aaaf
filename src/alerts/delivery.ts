/**
 * Delivering a run that found rows (docs/ALERTS.md, "Delivery"): to the webhook as
 * `{alert: {id, name}, fired_at, rows, row_count}` with the first 100 rows, to Slack as an
 * incoming-webhook message built from the rows (as the original's SlackAdaptor: a line naming the
 * alert and the row count, then the rows). Each destination is tried up to `attempts` times,
 * waiting `backoffMs`, 2×, 4×… between tries, when the answer is 5xx or 429, or on a timeout or a
 * dropped connection; a refused destination, a 3xx or another 4xx is final at once. Every attempt
 * is recorded for the run history.
 */
import { DeliveryTimeout, DestinationRefused, postJson, type DestinationPolicy } from './destinations.js';

/** Rows sent to a webhook (and kept in the run history). */
export const WEBHOOK_ROWS = 100;
/** Rows shown in a Slack message (Slack allows 50 blocks; a line each is plenty to see what fired). */
export const SLACK_ROWS = 10;
/** Slack refuses a section text over 3000 characters. */
const SLACK_TEXT_MAX = 2900;

export type Target = 'webhook' | 'slack';

export interface Attempt {
  at: string;
  /** The HTTP status, when there was an answer. */
  status?: number;
  error?: string;
  ms: number;
}

export interface Delivery {
  target: Target;
  /** The destination's host (the URL may carry a secret token in its path, as Slack's do). */
  host: string;
  status: 'delivered' | 'failed';
  attempts: Attempt[];
}

export interface Firing {
  alert: { id: string; name: string };
  runId: string;
  firedAt: string;
  rows: Record<string, unknown>[];
  rowCount: number;
}

export interface DeliveryOptions {
  policy: DestinationPolicy;
  timeoutMs: number;
  attempts: number;
  backoffMs: number;
}

export function webhookBody(f: Firing): object {
  return { alert: f.alert, fired_at: f.firedAt, rows: f.rows.slice(0, WEBHOOK_ROWS), row_count: f.rowCount };
}

export function slackBody(f: Firing): object {
  const count = f.rowCount === 1 ? '1 row' : `${f.rowCount} rows`;
  const headline = `🔊 *${escapeSlack(f.alert.name)}*, ${count}`;
  const shown = f.rows.slice(0, SLACK_ROWS);
  const blocks: object[] = [{ type: 'section', text: { type: 'mrkdwn', text: headline } }];
  for (const row of shown) {
    const text = JSON.stringify(row, null, 1);
    const clipped = text.length > SLACK_TEXT_MAX ? `${text.slice(0, SLACK_TEXT_MAX)}…` : text;
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: '```' + clipped.replaceAll('```', "'''") + '```' } });
  }
  if (f.rowCount > shown.length)
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `and ${f.rowCount - shown.length} more` }] });
  // `text` is what notifications and clients without blocks show.
  return { text: `${f.alert.name}: ${count}`, blocks };
}

/** Slack's mrkdwn control characters. */
function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Sends `body` to `url` with retries; resolves with what happened, never rejects. */
export async function deliver(target: Target, url: string, body: object, runId: string, options: DeliveryOptions): Promise<Delivery> {
  const attempts: Attempt[] = [];
  const host = hostOrUrl(url);
  for (let n = 1; n <= options.attempts; n++) {
    const started = Date.now();
    let retry = false;
    try {
      // The run id lets a receiver drop a second delivery of one run (a process that died between
      // sending and recording; docs/ALERTS.md, "Once").
      const answer = await postJson(options.policy, url, body, { timeoutMs: options.timeoutMs, headers: { 'Idempotency-Key': runId } });
      attempts.push({ at: new Date(started).toISOString(), status: answer.status, ms: Date.now() - started });
      if (answer.status >= 200 && answer.status < 300) return { target, host, status: 'delivered', attempts };
      retry = answer.status >= 500 || answer.status === 429;
      if (!retry) attempts[attempts.length - 1].error = answer.status < 400 ? 'redirects are not followed' : answer.body.slice(0, 200);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      attempts.push({ at: new Date(started).toISOString(), error: e.message, ms: Date.now() - started });
      retry = !(err instanceof DestinationRefused) && (err instanceof DeliveryTimeout || e.code !== undefined);
    }
    if (!retry) break;
    if (n < options.attempts) await sleep(options.backoffMs * 2 ** (n - 1));
  }
  return { target, host, status: 'failed', attempts };
}

function hostOrUrl(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
