/**
 * The body of `POST /api/alerts`, `PUT` and `PATCH /api/alerts/:idOrName` (docs/ALERTS.md): the
 * fields of the original's `alert_queries`. The shape is checked by Ajv (and is the OpenAPI
 * document's schema); the cron's rules, the destinations and the query (translated) are checked by
 * the service after it, each 422 at its field.
 */
import { Type, type Static } from '@sinclair/typebox';
import { compile, MAX_BYTES, NO_NUL, NOT_BLANK, notAnObject, problem } from '../http/validation.js';
import { BadRequestError, UnprocessableError, type ErrorDetail } from '../errors.js';
import { MAX_NAME_LENGTH, MAX_QUERY_BYTES } from '../inputLimits.js';
import type { AlertFields, AlertRecord } from './repository.js';

const MAX_DESCRIPTION = 10_000;
const MAX_URL = 2_048;

const url = (field: string, description: string) =>
  Type.Optional(
    Type.Union([Type.String({ maxLength: MAX_URL, ...NO_NUL }), Type.Null()], {
      description,
      ...problem('invalidUrl', `${field} must be null or an http(s) URL of at most ${MAX_URL} characters`),
    }),
  );
const readOnly = (description: string) => Type.Optional(Type.Unknown({ readOnly: true, description }));

export const AlertBodySchema = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        pattern: NOT_BLANK,
        maxLength: MAX_NAME_LENGTH,
        ...NO_NUL,
        description: 'Unique name.',
        ...problem('invalidName', `name is required: 1 to ${MAX_NAME_LENGTH} characters, not only spaces`),
      }),
    ),
    description: Type.Optional(
      Type.Union([Type.String({ maxLength: MAX_DESCRIPTION, ...NO_NUL }), Type.Null()], {
        default: '',
        ...problem('invalidDescription', `description must be a string of at most ${MAX_DESCRIPTION} characters`),
      }),
    ),
    language: Type.Optional(
      Type.Literal('bq_sql', {
        default: 'bq_sql',
        description: 'The query language: BigQuery SQL (the original also has pg_sql and lql).',
        ...problem('invalidLanguage', 'language must be "bq_sql": the query is BigQuery SQL'),
      }),
    ),
    query: Type.Optional(
      Type.String({
        pattern: NOT_BLANK,
        [MAX_BYTES]: MAX_QUERY_BYTES,
        ...NO_NUL,
        description: 'BigQuery-dialect SQL over sources and endpoints; the alert fires when it returns rows.',
        ...problem('invalidQuery', "query is required: the alert's BigQuery SQL", {
          [MAX_BYTES]: `query is longer than ${MAX_QUERY_BYTES / 1024} KB`,
          not: 'query contains the NUL character',
        }),
      }),
    ),
    cron: Type.Optional(
      Type.String({
        pattern: NOT_BLANK,
        maxLength: 200,
        description: 'When it runs: a cron expression in UTC (five fields, or six with seconds first).',
        ...problem('invalidCron', 'cron is required: a cron expression such as "*/5 * * * *"'),
      }),
    ),
    slack_hook_url: url('slack_hook_url', 'A Slack incoming-webhook URL; null: none.'),
    webhook_notification_url: url('webhook_notification_url', 'A URL that is POSTed the rows as JSON; null: none.'),
    enabled: Type.Optional(
      Type.Boolean({ default: true, description: 'Runs on its schedule.', ...problem('invalidValue', 'enabled must be true or false') }),
    ),
    id: readOnly('Ignored when sent.'),
    token: readOnly("Ignored when sent (the original's name of the id)."),
    created_at: readOnly('Ignored when sent.'),
    updated_at: readOnly('Ignored when sent.'),
    next_runs: readOnly('Ignored when sent.'),
  },
  { additionalProperties: false, ...problem('unknownField', 'unknown field "{field}"') },
);
export const AlertCreateSchema = { ...AlertBodySchema, required: ['name', 'query', 'cron'] } as typeof AlertBodySchema;
type AlertBody = Static<typeof AlertBodySchema>;

const checkCreate = compile(AlertCreateSchema);
const checkPatch = compile(AlertBodySchema);
const FIELDS = Object.keys(AlertBodySchema.properties).filter((k) => !AlertBodySchema.properties[k as keyof AlertBody].readOnly);

/**
 * The fields of a body: the whole definition (`current` undefined: create), or `current` with the
 * fields sent (PUT and PATCH: as the original, only the fields sent change). 400 when not an
 * object, 422 naming every field that is wrong.
 */
export function alertFields(input: unknown, current?: AlertRecord): AlertFields {
  const failures = (current ? checkPatch : checkCreate)(input);
  if (notAnObject(failures))
    throw new BadRequestError('The request body must be a JSON object (Content-Type: application/json).', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  const unknown = failures.filter((f) => f.keyword === 'additionalProperties');
  if (unknown.length) {
    const names = unknown.map((f) => `"${f.location}"`).join(', ');
    throw new UnprocessableError(`Unknown field ${names}: an alert has ${FIELDS.join(', ')}.`, [
      { domain: 'alerts', reason: 'unknownField', message: `unknown field ${names}`, location: unknown[0].location },
    ]);
  }
  const problems: ErrorDetail[] = failures.map((f) => ({ domain: 'alerts', reason: f.reason, message: f.message, location: f.location }));
  if (problems.length) throw invalid(problems);
  const body = input as AlertBody;
  const has = (k: keyof AlertBody) => Object.prototype.hasOwnProperty.call(body, k);
  const pick = <K extends keyof AlertFields>(k: K, fallback: AlertFields[K]): AlertFields[K] =>
    has(k) ? ((body[k as keyof AlertBody] as AlertFields[K] | null) ?? fallback) : current ? current[k] : fallback;
  return {
    name: pick('name', ''),
    description: pick('description', ''),
    language: 'bq_sql',
    query: pick('query', ''),
    cron: pick('cron', '').trim(),
    slack_hook_url: nullIfBlank(pick('slack_hook_url', null)),
    webhook_notification_url: nullIfBlank(pick('webhook_notification_url', null)),
    enabled: pick('enabled', true),
  };
}

function nullIfBlank(value: string | null): string | null {
  return value === null || value.trim() === '' ? null : value.trim();
}

/** 422 with every problem; the message is the first one's. */
export function invalid(problems: ErrorDetail[]): UnprocessableError {
  return new UnprocessableError(`The alert cannot be saved: ${problems[0].message}.`, problems);
}
