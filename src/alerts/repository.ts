import type { Knex } from 'knex';
import { isUuid } from '../ids.js';
import type { Delivery } from './delivery.js';

export interface AlertRecord {
  id: string;
  name: string;
  description: string;
  language: 'bq_sql';
  query: string;
  cron: string;
  slack_hook_url: string | null;
  webhook_notification_url: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export type AlertFields = Omit<AlertRecord, 'id' | 'created_at' | 'updated_at'>;

export type RunOutcome = 'running' | 'no_rows' | 'fired' | 'error';
export type DeliveryStatus = 'none' | 'pending' | 'delivered' | 'failed';

export interface AlertRunRecord {
  id: string;
  alert_id: string;
  scheduled_for: Date | null;
  trigger: 'schedule' | 'manual';
  started_at: Date;
  finished_at: Date | null;
  duration_ms: number | null;
  outcome: RunOutcome;
  error: string | null;
  row_count: number | null;
  rows: Record<string, unknown>[] | null;
  delivery: DeliveryStatus;
  deliveries: Delivery[];
  owner: string | null;
  lease_until: Date | null;
}

/** Runs shown by `GET /api/alerts/:id/runs`, newest first. */
export const RUNS_LISTED = 50;

/** The `alerts` table. */
export class AlertRepository {
  constructor(private readonly knex: Knex) {}

  list(): Promise<AlertRecord[]> {
    return this.knex<AlertRecord>('alerts').select('*').orderBy('name');
  }

  listEnabled(): Promise<AlertRecord[]> {
    return this.knex<AlertRecord>('alerts').where({ enabled: true }).select('*');
  }

  /** A UUID selects by id, any other string by name. */
  find(idOrName: string): Promise<AlertRecord | undefined> {
    return this.knex<AlertRecord>('alerts')
      .where(isUuid(idOrName) ? 'id' : 'name', idOrName)
      .first();
  }

  async insert(fields: AlertFields): Promise<AlertRecord> {
    const [row] = (await this.knex('alerts').insert(fields).returning('*')) as AlertRecord[];
    return row;
  }

  async update(id: string, fields: Partial<AlertFields>): Promise<AlertRecord | undefined> {
    const [row] = (await this.knex('alerts')
      .where({ id })
      .update({ ...fields, updated_at: this.knex.fn.now() })
      .returning('*')) as AlertRecord[];
    return row;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.knex('alerts').where({ id }).delete()) > 0;
  }
}

/**
 * The `alert_runs` table: the history, and the claims of scheduled ticks. A tick is claimed by
 * inserting its row (unique per alert and cron time): of all processes, exactly one inserts it.
 * The claim holds for a lease that the running process renews; a run whose lease ran out (its
 * process died) is taken over by one other process, which carries on from what the row says.
 */
export class AlertRunRepository {
  constructor(private readonly knex: Knex) {}

  /** The new run when this process claimed the tick; undefined when another process had. */
  async claimTick(alertId: string, scheduledFor: Date, owner: string, leaseMs: number): Promise<AlertRunRecord | undefined> {
    const rows = (await this.knex('alert_runs')
      .insert({ alert_id: alertId, scheduled_for: scheduledFor, trigger: 'schedule', owner, lease_until: this.leaseEnd(leaseMs) })
      .onConflict(['alert_id', 'scheduled_for'])
      .ignore()
      .returning('*')) as AlertRunRecord[];
    return rows[0];
  }

  async startManual(alertId: string, owner: string, leaseMs: number): Promise<AlertRunRecord> {
    const [row] = (await this.knex('alert_runs')
      .insert({ alert_id: alertId, trigger: 'manual', owner, lease_until: this.leaseEnd(leaseMs) })
      .returning('*')) as AlertRunRecord[];
    return row;
  }

  /** One run whose process stopped renewing its lease, now this process's; undefined when none. */
  async takeOverStale(owner: string, leaseMs: number): Promise<AlertRunRecord | undefined> {
    const rows = (await this.knex('alert_runs')
      .whereIn(
        'id',
        this.knex('alert_runs')
          .select('id')
          .where({ outcome: 'running' })
          .andWhere('lease_until', '<', this.knex.fn.now())
          .orderBy('lease_until')
          .limit(1)
          .forUpdate()
          .skipLocked(),
      )
      .update({ owner, lease_until: this.leaseEnd(leaseMs) })
      .returning('*')) as AlertRunRecord[];
    return rows[0];
  }

  /** Renews the lease; false when the run is no longer this process's (taken over). */
  async renew(runId: string, owner: string, leaseMs: number): Promise<boolean> {
    return (
      (await this.knex('alert_runs')
        .where({ id: runId, owner, outcome: 'running' })
        .update({ lease_until: this.leaseEnd(leaseMs) })) > 0
    );
  }

  /** Records a step of a run that this process still owns; false when it does not. */
  async record(runId: string, owner: string, fields: Partial<AlertRunRecord>): Promise<boolean> {
    const row: Record<string, unknown> = { ...fields };
    if (fields.rows !== undefined) row.rows = JSON.stringify(fields.rows);
    if (fields.deliveries !== undefined) row.deliveries = JSON.stringify(fields.deliveries);
    return (await this.knex('alert_runs').where({ id: runId, owner }).update(row)) > 0;
  }

  get(runId: string): Promise<AlertRunRecord | undefined> {
    return this.knex<AlertRunRecord>('alert_runs').where({ id: runId }).first();
  }

  list(alertId: string, limit = RUNS_LISTED): Promise<AlertRunRecord[]> {
    return this.knex<AlertRunRecord>('alert_runs').where({ alert_id: alertId }).orderBy('started_at', 'desc').limit(limit).select('*');
  }

  private leaseEnd(leaseMs: number): Knex.Raw {
    return this.knex.raw(`now() + make_interval(secs => ?)`, [leaseMs / 1000]);
  }
}
