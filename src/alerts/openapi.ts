/**
 * The alerts' part of the OpenAPI document (src/api/openapi.ts): schemas and paths of
 * `/api/alerts` (docs/ALERTS.md). The request bodies are the schemas that validate them.
 */
import { AlertBodySchema, AlertCreateSchema } from './definition.js';

type Json = Record<string, unknown>;

export function alertSchemas(plain: (schema: Json) => Json): Json {
  const attempt = {
    type: 'object',
    properties: {
      at: { type: 'string', format: 'date-time' },
      status: { type: 'integer', description: 'HTTP status, when there was an answer' },
      error: { type: 'string' },
      ms: { type: 'integer' },
    },
  };
  return {
    AlertBody: plain(AlertBodySchema),
    AlertCreate: plain(AlertCreateSchema),
    Alert: {
      type: 'object',
      required: ['id', 'token', 'name', 'query', 'cron', 'language', 'enabled'],
      properties: {
        ...(plain(AlertBodySchema).properties as Json),
        id: { type: 'string', format: 'uuid' },
        token: { type: 'string', format: 'uuid', description: "The id, under the original's name" },
        next_runs: { type: 'array', items: { type: 'string', format: 'date-time' }, description: 'The next three due times (UTC)' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
    },
    AlertRun: {
      type: 'object',
      required: ['id', 'alert_id', 'trigger', 'started_at', 'outcome', 'delivery', 'deliveries'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        alert_id: { type: 'string', format: 'uuid' },
        trigger: { enum: ['schedule', 'manual'] },
        scheduled_for: { type: ['string', 'null'], format: 'date-time', description: 'The due time of a scheduled run' },
        started_at: { type: 'string', format: 'date-time' },
        finished_at: { type: ['string', 'null'], format: 'date-time' },
        duration_ms: { type: ['integer', 'null'] },
        outcome: { enum: ['running', 'no_rows', 'fired', 'error'] },
        error: { type: ['string', 'null'] },
        row_count: { type: ['integer', 'null'] },
        rows: {
          type: ['array', 'null'],
          items: { type: 'object', additionalProperties: true },
          description: 'The first 100 rows (those sent)',
        },
        delivery: { enum: ['none', 'pending', 'delivered', 'failed'] },
        deliveries: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              target: { enum: ['webhook', 'slack'] },
              host: { type: 'string' },
              status: { enum: ['delivered', 'failed'] },
              attempts: { type: 'array', items: attempt },
            },
          },
        },
      },
    },
    AlertPreview: {
      type: 'object',
      required: ['rows', 'row_count'],
      properties: { rows: { type: 'array', items: { type: 'object', additionalProperties: true } }, row_count: { type: 'integer' } },
    },
  };
}

export function alertPaths(h: {
  ref: (name: string) => Json;
  json: (schema: Json, description: string) => Json;
  errors: Json;
  managementErrors: Json;
  runErrors: Json;
  security: unknown;
}): Json {
  const idOrName = { name: 'idOrName', in: 'path', required: true, description: 'UUID (id, token) or name', schema: { type: 'string' } };
  const body = (schema: string) => ({ required: true, content: { 'application/json': { schema: h.ref(schema) } } });
  const op = (summary: string, responses: Json, extra: Json = {}) => ({
    tags: ['alerts'],
    summary,
    security: h.security,
    ...extra,
    responses,
  });
  return {
    '/api/alerts': {
      get: op('Every alert', { '200': h.json({ type: 'array', items: h.ref('Alert') }, 'The list'), ...h.errors }),
      post: op('Create one', { '201': h.json(h.ref('Alert'), 'Created'), ...h.managementErrors }, { requestBody: body('AlertCreate') }),
    },
    '/api/alerts/preview': {
      post: op(
        'The rows a query would send (the first 100) and their count; nothing is saved or sent',
        { '200': h.json(h.ref('AlertPreview'), 'The rows'), ...h.runErrors, '422': h.json(h.ref('Error'), 'The query cannot be used') },
        {
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { type: 'object', properties: { query: { type: 'string' } } } } },
          },
        },
      ),
    },
    '/api/alerts/{idOrName}': {
      parameters: [idOrName],
      get: op('One by id or name', { '200': h.json(h.ref('Alert'), 'Found'), ...h.errors }),
      put: op(
        'Change the fields sent; answers the alert',
        { '200': h.json(h.ref('Alert'), 'Changed'), ...h.managementErrors },
        { requestBody: body('AlertBody') },
      ),
      patch: op('Change the fields sent', { '204': { description: 'Changed' }, ...h.managementErrors }, { requestBody: body('AlertBody') }),
      delete: op('Delete it and its history', { '204': { description: 'Deleted' }, ...h.errors }),
    },
    '/api/alerts/{idOrName}/runs': {
      parameters: [idOrName],
      get: op('Its last 50 runs, newest first', { '200': h.json({ type: 'array', items: h.ref('AlertRun') }, 'The runs'), ...h.errors }),
    },
    '/api/alerts/{idOrName}/run': {
      parameters: [idOrName],
      post: op('Run it now (delivered if it finds rows); answers the finished run', {
        '200': h.json(h.ref('AlertRun'), 'The run'),
        ...h.errors,
      }),
    },
  };
}
