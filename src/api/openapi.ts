/**
 * The OpenAPI 3.1 document of the HTTP API (docs/API.md, "OpenAPI"), built from the schemas that
 * validate requests: the endpoint, source and key bodies (src/endpoints/definition.ts,
 * src/sources/body.ts, src/auth/routes.ts) and each endpoint's parameters
 * (src/endpoints/params.ts, `parametersSchema`). With `endpoints`, one path per endpoint carries
 * its declared parameters, `allowed_values` as `enum`.
 */
import type { TSchema } from '@sinclair/typebox';
import { KeyBodySchema, KeyLimitsBodySchema } from '../auth/routes.js';
import { SCOPES } from '../auth/keys.js';
import { RESOURCE_SCOPE_PATTERN } from '../auth/scopes.js';
import { LIMIT_FIELDS } from '../auth/keyLimits.js';
import { EndpointBodySchema, EndpointCreateSchema, ParameterDeclarationSchema } from '../endpoints/definition.js';
import { parametersSchema, SandboxLqlSchema, SandboxSqlSchema } from '../endpoints/params.js';
import { SEARCH_PATHS, SEARCH_SCHEMAS } from '../lql/openapi.js';
import type { EndpointRecord } from '../endpoints/repository.js';
import { SourceBodySchema, SourceCreateSchema } from '../sources/body.js';
import { PROBLEM } from '../http/validation.js';
import { alertPaths, alertSchemas } from '../alerts/openapi.js';

type Json = Record<string, unknown>;

export const API_VERSION = '1.0.0';

/** A schema as plain JSON: TypeBox's symbols and the error wording (`x-problem`) left out. */
function plain(schema: TSchema | Json): Json {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === PROBLEM ? undefined : value))) as Json;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('Error'), description);
/** An object schema; `required` names the properties that are always there. */
const object = (required: string[], properties: Json) => ({ type: 'object', required, properties });

const ERRORS = {
  '400': error('Bad request: a parameter, body or query to change'),
  '401': error('No key, or an unknown key'),
  '403': error('The key lacks the scope'),
  '404': error('Unknown resource'),
};
const MANAGEMENT_ERRORS = { ...ERRORS, '409': error('Name taken, or read by other endpoints'), '422': error('Invalid definition') };
const RUN_ERRORS = { ...ERRORS, '504': error('The query ran past QUERY_TIMEOUT_MS'), '503': error('The database is unavailable') };

const idOrName = { name: 'idOrName', in: 'path', required: true, description: 'UUID or name', schema: { type: 'string' } };
const sqlParam = {
  name: 'sql',
  in: 'query',
  required: false,
  description: SandboxSqlSchema.description,
  schema: plain(SandboxSqlSchema),
};
const lqlParam = { name: 'lql', in: 'query', required: false, description: SandboxLqlSchema.description, schema: plain(SandboxLqlSchema) };
const paramsParam = {
  name: 'params',
  in: 'query',
  style: 'form',
  explode: true,
  description: "The endpoint's declared parameters",
  schema: { type: 'object', additionalProperties: { type: 'string' } },
};
const admin = [{ ApiKeyHeader: [] }, { Bearer: [] }];

const COMPONENTS = {
  securitySchemes: {
    ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-KEY' },
    Bearer: { type: 'http', scheme: 'bearer' },
    ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'For log shippers that can only set a URL.' },
  },
  schemas: {
    Error: object(['error'], {
      error: object(['code', 'status', 'message', 'errors'], {
        code: { type: 'integer' },
        status: { type: 'string' },
        message: { type: 'string' },
        errors: {
          type: 'array',
          items: object(['domain', 'reason', 'message'], {
            domain: { type: 'string' },
            reason: { type: 'string' },
            message: { type: 'string' },
            location: { type: 'string', description: 'A parameter, a field, or query:<line>:<column> / sql:<line>:<column>' },
          }),
        },
      }),
    }),
    Warning: object(['reason', 'message', 'location'], {
      reason: { type: 'string' },
      message: { type: 'string' },
      location: { type: 'string' },
    }),
    ParameterDeclaration: plain(ParameterDeclarationSchema),
    EndpointBody: plain(EndpointBodySchema),
    EndpointCreate: plain(EndpointCreateSchema),
    Endpoint: {
      type: 'object',
      required: ['id', 'name', 'query', 'parameters', 'version'],
      properties: {
        ...(plain(EndpointBodySchema).properties as Json),
        parameters: { type: 'array', items: ref('ParameterDeclaration') },
        id: { type: 'string', format: 'uuid' },
        token: { type: 'string', format: 'uuid', description: "The id, in the original service's name" },
        max_limit: { type: 'integer', description: "max_rows, in the original service's name" },
        proactive_requerying_seconds: { type: 'integer', description: "cache_warming_seconds, 0 for none, in the original service's name" },
        enable_dynamic_reservation: { type: 'boolean' },
        backend_id: { type: 'null' },
        version: { type: 'integer' },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
        warnings: { type: 'array', items: ref('Warning'), description: 'On create and update only.' },
      },
    },
    QueryResult: {
      type: 'object',
      required: ['result'],
      properties: { result: { type: 'array', items: { type: 'object', additionalProperties: true } } },
      description: 'One object per row; TIMESTAMP columns are unix microseconds (docs/API.md, "Row encoding").',
    },
    WhatWillRun: {
      type: 'object',
      required: ['sql', 'parameters', 'warnings'],
      properties: {
        sql: { type: 'string' },
        parameters: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, value: { type: ['string', 'null'] } } },
        },
        warnings: { type: 'array', items: ref('Warning') },
        plan: { description: 'EXPLAIN (FORMAT JSON), with explain=true' },
      },
    },
    SourceBody: plain(SourceBodySchema),
    SourceCreate: plain(SourceCreateSchema),
    Source: {
      type: 'object',
      required: ['id', 'name', 'table_name', 'retention_days', 'schema'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        table_name: { type: 'string' },
        retention_days: { type: 'integer' },
        schema: { type: 'object', additionalProperties: true, description: 'Inferred schema: field → BigQuery type, records nested.' },
        hot_leaves: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              path: { type: 'string' },
              type: { type: 'string' },
              index: {
                type: 'string',
                enum: ['project', 'timestamp', 'both', 'none'],
                description: 'Which index INCLUDEs the column: (project, "timestamp"), ("timestamp"), both or none',
              },
              backfill: { description: '"done", or {"pending_partitions": n}' },
            },
          },
        },
        created_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
    },
    PartitionCount: object(['day', 'partition', 'events', 'drops_at'], {
      day: { type: 'string', format: 'date' },
      partition: { type: 'string' },
      events: { type: 'integer' },
      drops_at: { type: 'string', format: 'date-time', description: 'When retention drops the partition' },
    }),
    ...SEARCH_SCHEMAS,
    KeyBody: plain(KeyBodySchema),
    KeyLimitsBody: plain(KeyLimitsBodySchema),
    AccessTokenBody: {
      type: 'object',
      properties: {
        description: { type: ['string', 'null'], maxLength: 200 },
        scopes: {
          type: ['string', 'null'],
          description: 'Space-separated: private, query, ingest, query:endpoint:<endpoint id>, ingest:source:<source id>',
          examples: ['ingest query'],
        },
      },
    },
    AccessToken: object(['id', 'token', 'description', 'scopes', 'inserted_at'], {
      id: { type: 'string', format: 'uuid' },
      token: { type: ['string', 'null'], description: 'Only in the answer to POST, shown this once.' },
      description: { type: ['string', 'null'] },
      scopes: { type: 'string' },
      inserted_at: { type: 'string', format: 'date-time' },
    }),
    Key: {
      type: 'object',
      required: ['id', 'name', 'prefix', 'scopes'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        prefix: { type: 'string' },
        scopes: {
          type: 'array',
          items: { anyOf: [{ enum: [...SCOPES] }, { type: 'string', pattern: RESOURCE_SCOPE_PATTERN }] },
        },
        created_at: { type: 'string', format: 'date-time' },
        ...Object.fromEntries(
          LIMIT_FIELDS.map((f) => [f, { type: ['integer', 'null'], description: "The key's own limit; null: the configured default" }]),
        ),
        key: { type: 'string', description: 'Only in the answer to POST, shown this once.' },
      },
    },
    ...alertSchemas(plain),
  },
};

/** `patchAnswers`: '204' where PATCH answers no body (endpoints, as the original service answers). */
function crud(tag: string, item: string, body: string, create: string, listDescription: string, patchAnswers: '200' | '204' = '200') {
  const base = `/api/${tag}`;
  /** A request that sends a body of `schema` and answers the item. */
  const write = (summary: string, schema: string, status: '200' | '201', answer: string) => ({
    tags: [tag],
    summary,
    security: admin,
    requestBody: { required: true, content: { 'application/json': { schema: ref(schema) } } },
    responses: { [status]: json(ref(item), answer), ...MANAGEMENT_ERRORS },
  });
  return {
    [base]: {
      get: {
        tags: [tag],
        summary: listDescription,
        security: admin,
        responses: { '200': json({ type: 'array', items: ref(item) }, 'The list'), ...ERRORS },
      },
      post: write('Create one', create, '201', 'Created'),
    },
    [`${base}/{idOrName}`]: {
      parameters: [idOrName],
      get: { tags: [tag], summary: 'One by id or name', security: admin, responses: { '200': json(ref(item), 'Found'), ...ERRORS } },
      put: write('Replace: omitted fields take their defaults', create, '200', 'Replaced'),
      patch:
        patchAnswers === '200'
          ? write('Change the fields sent', body, '200', 'Changed')
          : {
              ...write('Change the fields sent; no body is answered (as the original service answers)', body, '200', 'Changed'),
              responses: { '204': { description: 'Changed' }, ...MANAGEMENT_ERRORS },
            },
      delete: { tags: [tag], summary: 'Delete', security: admin, responses: { '204': { description: 'Deleted' }, ...MANAGEMENT_ERRORS } },
    },
  };
}

const runResponses = {
  '200': {
    ...json(ref('QueryResult'), 'The rows'),
    headers: { 'X-Cache': { description: 'HIT, MISS or BYPASS', schema: { enum: ['HIT', 'MISS', 'BYPASS'] } } },
  },
  ...RUN_ERRORS,
};
const runSecurity = [{ ApiKeyHeader: [] }, { Bearer: [] }, { ApiKeyQuery: [] }];

const GENERIC_PATHS = {
  '/api/endpoints/query/{idOrName}': {
    parameters: [idOrName],
    get: {
      tags: ['query'],
      summary: 'Run an endpoint; its parameters are the query string (the per-endpoint paths list them)',
      security: runSecurity,
      parameters: [sqlParam, lqlParam, paramsParam],
      responses: runResponses,
    },
    post: {
      tags: ['query'],
      summary: 'Run an endpoint with its parameters in a JSON body',
      security: runSecurity,
      requestBody: { content: { 'application/json': { schema: { type: 'object', additionalProperties: { type: 'string' } } } } },
      responses: { ...runResponses, '413': error('Body over 1 MB'), '415': error('Not JSON') },
    },
  },
  ...crud('endpoints', 'Endpoint', 'EndpointBody', 'EndpointCreate', 'Every endpoint', '204'),
  ...Object.fromEntries(
    ['/endpoints/query/{idOrName}', '/api/endpoints/query/name/{idOrName}'].map((path) => [
      path,
      {
        parameters: [idOrName],
        get: {
          tags: ['query'],
          summary: "The original service's older path of GET /api/endpoints/query/{idOrName}",
          deprecated: true,
          security: runSecurity,
          parameters: [sqlParam, paramsParam],
          responses: runResponses,
        },
      },
    ]),
  ),
  '/api/endpoints/{idOrName}/sql': {
    parameters: [idOrName],
    get: {
      tags: ['endpoints'],
      summary: 'The translated Postgres SQL that a run would execute, and its plan with explain=true',
      security: admin,
      parameters: [sqlParam, { name: 'explain', in: 'query', schema: { enum: ['true', 'false'] } }, paramsParam],
      responses: { '200': json(ref('WhatWillRun'), 'What will run'), ...ERRORS },
    },
  },
  ...crud('sources', 'Source', 'SourceBody', 'SourceCreate', 'Every source'),
  '/api/sources/{idOrName}/partitions': {
    parameters: [idOrName],
    get: {
      tags: ['sources'],
      summary: 'Events per day partition, oldest first, and when retention drops each',
      security: admin,
      responses: { '200': json({ type: 'array', items: ref('PartitionCount') }, 'The partitions'), ...ERRORS },
    },
  },
  ...SEARCH_PATHS,
  '/api/keys': {
    get: {
      tags: ['keys'],
      summary: 'Every key (never the key itself)',
      security: admin,
      responses: { '200': json({ type: 'array', items: ref('Key') }, 'The keys'), ...ERRORS },
    },
    post: {
      tags: ['keys'],
      summary: 'Create a key; the answer shows it once',
      security: admin,
      requestBody: { required: true, content: { 'application/json': { schema: ref('KeyBody') } } },
      responses: { '201': json(ref('Key'), 'Created'), ...MANAGEMENT_ERRORS },
    },
  },
  '/api/keys/{id}': {
    parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
    patch: {
      tags: ['keys'],
      summary: 'Set the key\'s limits sent (docs/API.md, "Rate limits"): a number, 0 for no limit, null for the configured default',
      security: admin,
      requestBody: { required: true, content: { 'application/json': { schema: ref('KeyLimitsBody') } } },
      responses: { '200': json(ref('Key'), 'Changed'), ...ERRORS, '422': error('An unknown field or a bad value') },
    },
    delete: { tags: ['keys'], summary: 'Revoke a key', security: admin, responses: { '204': { description: 'Deleted' }, ...ERRORS } },
  },
  '/api/access-tokens': {
    get: {
      tags: ['keys'],
      summary: "Every key as the original service's access tokens (token is null: only hashes are kept)",
      security: admin,
      responses: { '200': json({ type: 'array', items: ref('AccessToken') }, 'The tokens'), ...ERRORS },
    },
    post: {
      tags: ['keys'],
      summary: 'Create an access token; the answer shows it once',
      security: admin,
      requestBody: { required: true, content: { 'application/json': { schema: ref('AccessTokenBody') } } },
      responses: { '201': json(ref('AccessToken'), 'Created'), ...ERRORS, '422': error('An unrecognized scope') },
    },
  },
  '/api/access-tokens/{token}': {
    parameters: [{ name: 'token', in: 'path', required: true, description: 'The token itself, or its id', schema: { type: 'string' } }],
    delete: {
      tags: ['keys'],
      summary: 'Revoke an access token',
      security: admin,
      responses: { '204': { description: 'Deleted' }, ...ERRORS },
    },
  },
  ...alertPaths({ ref, json, errors: ERRORS, managementErrors: MANAGEMENT_ERRORS, runErrors: RUN_ERRORS, security: admin }),
  '/api/logs': {
    post: {
      tags: ['ingest'],
      summary: 'Ingest events (docs/INGEST.md): one event, {"batch": [...]}, an array or NDJSON',
      security: [{ ApiKeyHeader: [] }, { Bearer: [] }, { ApiKeyQuery: [] }],
      parameters: [
        { name: 'source_name', in: 'query', schema: { type: 'string' } },
        { name: 'source', in: 'query', schema: { type: 'string' } },
      ],
      requestBody: {
        required: true,
        content: {
          'application/json': { schema: {} },
          'application/x-ndjson': { schema: { type: 'string' } },
        },
      },
      responses: {
        '200': json(
          { type: 'object', properties: { message: { type: 'string' }, count: { type: 'integer' }, dropped: { type: 'integer' } } },
          'Stored',
        ),
        '406': error('Some events invalid; the valid ones are stored'),
        ...ERRORS,
      },
    },
  },
  '/api/openapi.json': {
    get: {
      tags: ['meta'],
      summary: 'This document; with a key that may run endpoints, one path per endpoint',
      security: [{}, { ApiKeyHeader: [] }, { Bearer: [] }],
      responses: {
        '200': json({ type: 'object' }, 'OpenAPI 3.1'),
        '401': error('Unknown key'),
        '403': error('The key lacks the query scope'),
      },
    },
  },
  '/health': { get: { tags: ['meta'], summary: 'Process alive', security: [], responses: { '200': json({ type: 'object' }, 'OK') } } },
  '/ready': {
    get: {
      tags: ['meta'],
      summary: 'Database reachable',
      security: [],
      responses: { '200': json({ type: 'object' }, 'Ready'), '503': json({ type: 'object' }, 'Unavailable') },
    },
  },
};

/** One path per endpoint: GET with its parameters in the query string, POST with them as a JSON body. */
function endpointPath(endpoint: EndpointRecord) {
  const schema = plain(parametersSchema(endpoint.parameters));
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const summary = endpoint.description || `Run ${endpoint.name}`;
  return {
    get: {
      tags: ['endpoint'],
      operationId: `run:${endpoint.name}`,
      summary,
      // The settings a caller sees in the console (console/src/pages/EndpointPage.tsx): never the query text.
      'x-endpoint': {
        name: endpoint.name,
        description: endpoint.description,
        parameters: endpoint.parameters,
        max_rows: endpoint.max_rows,
        cache_duration_seconds: endpoint.cache_duration_seconds,
        cache_warming_seconds: endpoint.cache_warming_seconds,
        sandboxable: endpoint.sandboxable,
        redact_pii: endpoint.redact_pii,
      },
      security: runSecurity,
      parameters: [
        ...Object.entries(properties).map(([name, s]) => ({
          name,
          in: 'query',
          required: required.has(name),
          ...(s.description ? { description: s.description } : {}),
          schema: s,
        })),
        ...(endpoint.sandboxable ? [sqlParam] : []),
      ],
      responses: runResponses,
    },
    post: {
      tags: ['endpoint'],
      operationId: `runPost:${endpoint.name}`,
      summary,
      security: runSecurity,
      requestBody: { content: { 'application/json': { schema } } },
      responses: runResponses,
    },
  };
}

/** The document: the whole API, and with `endpoints` a path per endpoint (docs/API.md, "OpenAPI"). */
export function openApiDocument(endpoints: readonly EndpointRecord[] = []): Json {
  const perEndpoint = Object.fromEntries(endpoints.map((e) => [`/api/endpoints/query/${e.name}`, endpointPath(e)]));
  return {
    openapi: '3.1.0',
    info: {
      title: 'logquery',
      version: API_VERSION,
      description: 'Saved, parameterised BigQuery-dialect log queries over HTTP (docs/API.md).',
    },
    servers: [{ url: '/' }],
    security: [{ ApiKeyHeader: [] }],
    tags: ['query', 'endpoint', 'endpoints', 'sources', 'keys', 'alerts', 'ingest', 'meta'].map((name) => ({ name })),
    paths: { ...perEndpoint, ...GENERIC_PATHS },
    components: COMPONENTS,
  };
}
