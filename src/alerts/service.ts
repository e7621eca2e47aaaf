/**
 * Alerts (docs/ALERTS.md): their management, and running one.
 *
 * Saving an alert checks it as an endpoint is checked: its query is translated (it may read
 * sources and endpoints, has no @parameters), a problem is 422 at `query:<line>:<column>`; its cron
 * must be valid and not run more often than ALERT_MIN_INTERVAL_SECONDS; its URLs must be http(s)
 * and allowed by ALERT_WEBHOOK_HOSTS.
 *
 * A run is a row of `alert_runs` that moves on step by step, each step recorded before the next:
 * the query (read-only, as the reader role, within QUERY_TIMEOUT_MS, like an endpoint's), then
 * its first rows, then each destination's delivery. A run taken over from a process that died
 * (src/alerts/scheduler.ts) carries on from the last recorded step: it sends the recorded rows
 * and skips the destinations already delivered to.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import type { ReplicaRouter } from '../db/replicas.js';
import type { SourceLookup } from '../sources/schema.js';
import { BadRequestError, ConflictError, NotFoundError, QueryTimeoutError, UnprocessableError, type ErrorDetail } from '../errors.js';
import { executeReadOnly } from '../query/execute.js';
import { encodeRows } from '../query/encode.js';
import { initTranslator, SqlError, type Translation } from '../sql/index.js';
import { searchHoursAt } from '../sql/catalog.js';
import { EndpointRepository } from '../endpoints/repository.js';
import { loadReadable, translateNested } from '../endpoints/nesting.js';
import { alertFields, invalid } from './definition.js';
import { cronProblem, cronSchedule, intervalProblem } from './schedule.js';
import {
  deliver,
  slackBody,
  webhookBody,
  WEBHOOK_ROWS,
  type Delivery,
  type DeliveryOptions,
  type Firing,
  type Target,
} from './delivery.js';
import type { DestinationPolicy } from './destinations.js';
import { AlertRepository, AlertRunRepository, type AlertFields, type AlertRecord, type AlertRunRecord } from './repository.js';

/** The most rows an alert's query returns (the original asks BigQuery for 1000): `row_count` counts up to it. */
export const MAX_ALERT_ROWS = 1000;

export interface AlertServiceDeps {
  knex: Knex;
  sources: SourceLookup;
  /** Where queries run: as endpoint queries do (src/db/replicas.ts). */
  reads: Pick<ReplicaRouter, 'run'>;
  queryTimeoutMs: number;
  /** The database takes a pipelined batch (`db.capabilities.pipelinedBatch`). */
  pipelined: boolean;
  policy: DestinationPolicy;
  minIntervalSeconds: number;
  delivery: Omit<DeliveryOptions, 'policy'>;
  leaseMs: number;
  logger: Logger;
}

/** An alert as answered: the record, `token` (the original's name for its id) and its next times. */
export type AlertView = AlertRecord & { token: string; next_runs: string[] };

export class AlertService {
  readonly alerts: AlertRepository;
  readonly runs: AlertRunRepository;
  private readonly endpoints: EndpointRepository;
  /** This process, as the owner of the runs it claims. */
  readonly owner = randomUUID();

  constructor(private readonly deps: AlertServiceDeps) {
    this.alerts = new AlertRepository(deps.knex);
    this.runs = new AlertRunRepository(deps.knex);
    this.endpoints = new EndpointRepository(deps.knex);
  }

  async list(): Promise<AlertView[]> {
    return (await this.alerts.list()).map(view);
  }

  async get(idOrName: string): Promise<AlertView> {
    return view(await this.find(idOrName));
  }

  async create(body: unknown): Promise<AlertView> {
    const fields = await this.checked(alertFields(body));
    return view(await this.alerts.insert(fields).catch(duplicateName(fields.name)));
  }

  /** PUT and PATCH: the fields sent change (as the original's update). */
  async update(idOrName: string, body: unknown): Promise<AlertView> {
    const current = await this.find(idOrName);
    const fields = await this.checked(alertFields(body, current));
    const row = await this.alerts.update(current.id, fields).catch(duplicateName(fields.name));
    if (!row) throw notFound(idOrName);
    return view(row);
  }

  async delete(idOrName: string): Promise<void> {
    const current = await this.find(idOrName);
    if (!(await this.alerts.delete(current.id))) throw notFound(idOrName);
  }

  async history(idOrName: string): Promise<AlertRunView[]> {
    return (await this.runs.list((await this.find(idOrName)).id)).map(runView);
  }

  /** `POST /api/alerts/:idOrName/run`: a run now, delivered if it finds rows; answers the finished run. */
  async runNow(idOrName: string): Promise<AlertRunView> {
    const alert = await this.find(idOrName);
    const run = await this.runs.startManual(alert.id, this.owner, this.deps.leaseMs);
    await this.execute(run, alert);
    return runView((await this.runs.get(run.id)) ?? run);
  }

  /** The rows a query would send, without saving or delivering anything (the console's "test now"). */
  async preview(body: unknown): Promise<{ rows: Record<string, unknown>[]; row_count: number }> {
    const query = (body as { query?: unknown } | null)?.query;
    if (typeof query !== 'string' || !query.trim())
      throw invalid([
        { domain: 'alerts', reason: 'invalidQuery', message: "query is required: the alert's BigQuery SQL", location: 'query' },
      ]);
    const translation = await this.translate(query);
    const rows = await this.query(translation).catch((err) => Promise.reject(runError(err, this.deps.queryTimeoutMs)));
    return { rows: rows.slice(0, WEBHOOK_ROWS), row_count: rows.length };
  }

  /**
   * Carries `run` on from its last recorded step to its end. Never rejects: what went wrong is
   * recorded in the run. Stops early when the run is no longer this process's.
   */
  async execute(run: AlertRunRecord, alert: AlertRecord): Promise<void> {
    const owner = this.owner;
    const heartbeat = setInterval(
      () => {
        void this.runs.renew(run.id, owner, this.deps.leaseMs).catch(() => undefined);
      },
      Math.max(250, this.deps.leaseMs / 3),
    );
    heartbeat.unref();
    const finished = () => ({ finished_at: new Date(), duration_ms: Date.now() - new Date(run.started_at).getTime() });
    try {
      let rows = run.rows;
      let rowCount = run.row_count ?? 0;
      if (rows === null) {
        let found: Record<string, unknown>[];
        try {
          found = await this.query(await this.translate(alert.query));
        } catch (err) {
          const e = runError(err, this.deps.queryTimeoutMs);
          await this.runs.record(run.id, owner, { outcome: 'error', error: e.message, ...finished() });
          this.deps.logger.warn({ alert: alert.name, err: e.message }, 'alert query failed');
          return;
        }
        rowCount = found.length;
        rows = found.slice(0, WEBHOOK_ROWS);
        if (rowCount === 0) {
          await this.runs.record(run.id, owner, { outcome: 'no_rows', row_count: 0, rows: [], ...finished() });
          return;
        }
        // Recorded before anything is sent: a run resumed elsewhere sends these rows, not a new query's.
        if (!(await this.runs.record(run.id, owner, { row_count: rowCount, rows, delivery: 'pending' }))) return;
      }
      const firing: Firing = {
        alert: { id: alert.id, name: alert.name },
        runId: run.id,
        firedAt: new Date(run.scheduled_for ?? run.started_at).toISOString(),
        rows,
        rowCount,
      };
      const deliveries: Delivery[] = [...run.deliveries];
      for (const [target, url, body] of destinations(alert, firing)) {
        if (deliveries.some((d) => d.target === target)) continue; // done before a takeover
        deliveries.push(await deliver(target, url, body, run.id, { policy: this.deps.policy, ...this.deps.delivery }));
        if (!(await this.runs.record(run.id, owner, { deliveries }))) return;
      }
      const delivery = deliveries.length === 0 ? 'none' : deliveries.every((d) => d.status === 'delivered') ? 'delivered' : 'failed';
      if (delivery === 'failed') this.deps.logger.warn({ alert: alert.name, deliveries }, 'alert delivery failed');
      await this.runs.record(run.id, owner, { outcome: 'fired', delivery, ...finished() });
    } catch (err) {
      // The database went away mid-run: the lease runs out and another process (or this one) resumes it.
      this.deps.logger.warn({ alert: alert.name, err: (err as Error).message }, 'alert run interrupted; it will be resumed');
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async find(idOrName: string): Promise<AlertRecord> {
    const found = await this.alerts.find(idOrName);
    if (!found) throw notFound(idOrName);
    return found;
  }

  /** The rules beyond the body's shape, each 422 at its field, and the query's translation. */
  private async checked(fields: AlertFields): Promise<AlertFields> {
    const problems: ErrorDetail[] = [];
    const cron = cronProblem(fields.cron) ?? intervalProblem(fields.cron, this.deps.minIntervalSeconds);
    if (cron) problems.push({ domain: 'alerts', reason: 'invalidCron', message: cron, location: 'cron' });
    for (const field of ['slack_hook_url', 'webhook_notification_url'] as const) {
      const url = fields[field];
      const problem = url === null ? undefined : this.deps.policy.urlProblem(url);
      if (problem) problems.push({ domain: 'alerts', reason: 'invalidUrl', message: `${field} ${problem}`, location: field });
    }
    if (problems.length) throw invalid(problems);
    await this.translate(fields.query);
    return fields;
  }

  /** The query translated as an endpoint's (reading sources and endpoints); 422 at `query:<line>:<column>`. */
  private async translate(query: string): Promise<Translation> {
    await initTranslator();
    const sources = this.deps.sources;
    const readable = await loadReadable(query, sources, (names) => this.endpoints.findByNames(names));
    let translation: Translation;
    try {
      // A name no endpoint can have (":" is not allowed in one), so the query cannot read itself.
      const searchHours = searchHoursAt(Date.now());
      translation = translateNested({ name: ':alert', query, maxRows: MAX_ALERT_ROWS, searchHours }, sources, (n) =>
        readable.get(n),
      ).translation;
    } catch (err) {
      if (!(err instanceof SqlError)) throw err;
      const location = `query:${err.line}:${err.column}`;
      throw new UnprocessableError(`The query cannot be used: ${err.message}.\n${err.snippet}`, [
        { domain: 'sql', reason: err.name.replace(/^Sql/, '').replace(/^./, (c) => c.toLowerCase()), message: err.message, location },
      ]);
    }
    if (translation.parameters.length) {
      const message = `an alert's query has no parameters to be given, but it uses @${translation.parameters[0]}`;
      throw invalid([{ domain: 'alerts', reason: 'parametersNotAllowed', message, location: 'query' }]);
    }
    return translation;
  }

  /** Runs a translation read-only as the reader role within QUERY_TIMEOUT_MS; the rows encoded as an endpoint's. */
  private async query(translation: Translation): Promise<Record<string, unknown>[]> {
    const run = await this.deps.reads.run((target) =>
      executeReadOnly(target.pool, translation.sql, [], {
        timeoutMs: this.deps.queryTimeoutMs,
        useReaderRole: target.useReaderRole,
        pipelined: this.deps.pipelined,
      }),
    );
    return encodeRows(
      run.fields,
      translation.columns.map((c) => c.name),
      run.rows,
    );
  }
}

/** Each destination of an alert with the body it is sent. */
function destinations(alert: AlertRecord, firing: Firing): Array<[Target, string, object]> {
  const out: Array<[Target, string, object]> = [];
  if (alert.webhook_notification_url) out.push(['webhook', alert.webhook_notification_url, webhookBody(firing)]);
  if (alert.slack_hook_url) out.push(['slack', alert.slack_hook_url, slackBody(firing)]);
  return out;
}

/** A run as answered: without the claim's bookkeeping (owner, lease). */
export type AlertRunView = Omit<AlertRunRecord, 'owner' | 'lease_until'>;

function runView(run: AlertRunRecord): AlertRunView {
  const { owner: _owner, lease_until: _lease, ...rest } = run;
  return rest;
}

function view(alert: AlertRecord): AlertView {
  let next: string[] = [];
  if (!cronProblem(alert.cron))
    next = cronSchedule(alert.cron)
      .nextDue(Date.now(), 3)
      .map((t) => new Date(t).toISOString());
  return { ...alert, token: alert.id, next_runs: alert.enabled ? next : [] };
}

/** What a failed query is recorded (or answered) as. */
function runError(err: unknown, timeoutMs: number): Error {
  const e = err as { code?: string; message?: string };
  if (e.code === '57014') return new QueryTimeoutError(timeoutMs);
  if (err instanceof Error && !e.code) return err;
  return new BadRequestError(`The query failed: ${(e.message ?? String(err)).split('\n')[0]}.`, [
    { domain: 'sql', reason: 'queryFailed', message: (e.message ?? '').split('\n')[0], location: 'query' },
  ]);
}

function notFound(idOrName: string): NotFoundError {
  return new NotFoundError(`No alert named or with id "${idOrName}".`, [
    { domain: 'alerts', reason: 'notFound', message: 'unknown alert', location: 'idOrName' },
  ]);
}

function duplicateName(name: string) {
  return (err: Error & { code?: string }): never => {
    if (err.code === '23505')
      throw new ConflictError(`An alert named "${name}" already exists.`, [
        { domain: 'alerts', reason: 'duplicateName', message: 'name already taken', location: 'name' },
      ]);
    throw err;
  };
}
