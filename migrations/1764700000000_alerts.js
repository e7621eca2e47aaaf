/**
 * Alerts (docs/ALERTS.md): a saved BigQuery-SQL query on a cron schedule, delivered to a webhook
 * and/or a Slack incoming webhook when it finds rows; the columns are those of the original's
 * `alert_queries`. `alert_runs` is the history of every run and, through its unique
 * (alert_id, scheduled_for), the claim of a scheduled tick: one row per tick, inserted by exactly
 * one process (src/alerts/scheduler.ts). `lease_until` lets another process resume a run whose
 * process died; `rows` keeps what was (or will be) sent, so a resumed run sends the same rows.
 */
export const up = (pgm) => {
  pgm.createTable('alerts', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    name: { type: 'text', notNull: true, unique: true },
    description: { type: 'text', notNull: true, default: '' },
    language: { type: 'text', notNull: true, default: 'bq_sql' },
    query: { type: 'text', notNull: true },
    cron: { type: 'text', notNull: true },
    slack_hook_url: { type: 'text' },
    webhook_notification_url: { type: 'text' },
    enabled: { type: 'boolean', notNull: true, default: true },
    created_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
    updated_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
  });

  pgm.createTable('alert_runs', {
    id: { type: 'uuid', primaryKey: true, default: pgm.func('gen_random_uuid()') },
    alert_id: { type: 'uuid', notNull: true, references: 'alerts', onDelete: 'CASCADE' },
    // The cron time this run is for; NULL for a run asked for by hand (POST /api/alerts/:id/run).
    scheduled_for: { type: 'timestamptz' },
    trigger: { type: 'text', notNull: true },
    started_at: { type: 'timestamptz', notNull: true, default: pgm.func('now()') },
    finished_at: { type: 'timestamptz' },
    duration_ms: { type: 'integer' },
    // running → no_rows | fired | error
    outcome: { type: 'text', notNull: true, default: 'running' },
    error: { type: 'text' },
    row_count: { type: 'integer' },
    rows: { type: 'jsonb' },
    // none | pending | delivered | failed; `deliveries` has each destination and its attempts.
    delivery: { type: 'text', notNull: true, default: 'none' },
    deliveries: { type: 'jsonb', notNull: true, default: '[]' },
    owner: { type: 'text' },
    lease_until: { type: 'timestamptz' },
  });
  pgm.addConstraint('alert_runs', 'alert_runs_one_per_tick', { unique: ['alert_id', 'scheduled_for'] });
  pgm.createIndex('alert_runs', ['alert_id', { name: 'started_at', sort: 'DESC' }]);
  pgm.createIndex('alert_runs', ['lease_until'], { where: "outcome = 'running'" });
};

export const down = (pgm) => {
  pgm.dropTable('alert_runs');
  pgm.dropTable('alerts');
};
