/**
 * A service instance for alert tests on the shared test database, configured for alerts:
 * loopback allowed (ALERT_WEBHOOK_HOSTS=127.0.0.1, where the test receivers listen), schedules
 * down to a second, quick retries.
 */
import type { Listener } from '../../src/http/server.js';
import { createApp } from '../../src/app.js';
import { generateKey } from '../../src/auth/keys.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { createEmptyDatabase, testConfig, testContext } from '../support/db.js';

export const ALERT_ENV = {
  ALERT_WEBHOOK_HOSTS: '127.0.0.1',
  ALERT_MIN_INTERVAL_SECONDS: '1',
  ALERT_DELIVERY_ATTEMPTS: '3',
  ALERT_RETRY_BACKOFF_MS: '20',
  ALERT_DELIVERY_TIMEOUT_MS: '1000',
  ALERT_RUN_LEASE_MS: '1000',
};

export interface AlertTestApp {
  context: AppContext;
  app: Listener;
  admin: string;
  close(): Promise<void>;
}

/**
 * A context of its own (its AlertService is one "process") with its app and an admin key, on
 * the shared test database or on `databaseUrl`.
 */
export async function alertTestApp(env: Record<string, string> = {}, databaseUrl?: string): Promise<AlertTestApp> {
  const url = databaseUrl ?? (await testContext()).db.url;
  const context = await createContext(testConfig(url, { ...ALERT_ENV, ...env }), createLogger('silent'));
  const admin = generateKey();
  await context.keys.create(`alerts-admin-${admin.slice(0, 6)}`, admin, ['admin']);
  return { context, app: await createApp(context), admin, close: () => context.close() };
}

/** A database of its own (dropped with the others after the run): schedulers see only its alerts. */
export async function ownAlertDatabase(): Promise<string> {
  return (await createEmptyDatabase('lq_alerts')).url;
}
