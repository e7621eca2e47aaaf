/** The search route's part of the OpenAPI document (src/api/openapi.ts; docs/API.md, "Searching a source"). */
import { HISTOGRAM_MAX_BUCKETS, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT } from './search.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const error = (description: string) => ({ description, content: { 'application/json': { schema: ref('Error') } } });
const query = (name: string, description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

export const SEARCH_SCHEMAS = {
  SearchAnswer: {
    type: 'object',
    required: ['result', 'cursor', 'kind', 'window', 'histogram'],
    properties: {
      result: {
        type: 'array',
        items: { type: 'object', additionalProperties: true },
        description: 'Events newest first (whole rows), or the points {timestamp, value} of a c: chart',
      },
      cursor: { type: ['string', 'null'], description: 'Give it back as `cursor` for the next, older page; null on the last page' },
      kind: { enum: ['events', 'chart'] },
      window: {
        type: 'object',
        required: ['start', 'end'],
        properties: { start: { type: ['string', 'null'], format: 'date-time' }, end: { type: ['string', 'null'], format: 'date-time' } },
      },
      histogram: {
        type: 'object',
        required: ['interval_seconds', 'buckets'],
        properties: {
          interval_seconds: { type: 'integer' },
          buckets: {
            type: 'array',
            maxItems: HISTOGRAM_MAX_BUCKETS + 1,
            items: {
              type: 'object',
              required: ['timestamp', 'count'],
              properties: { timestamp: { type: 'string', format: 'date-time' }, count: { type: 'integer' } },
            },
          },
        },
      },
    },
  },
};

export const SEARCH_PATHS = {
  '/api/sources/{idOrName}/events': {
    parameters: [{ name: 'idOrName', in: 'path', required: true, description: 'UUID or name', schema: { type: 'string' } }],
    get: {
      tags: ['sources'],
      summary: "The source's events matching LQL (docs/LQL.md), newest first, a page at a time, with a histogram",
      security: [{ ApiKeyHeader: [] }, { Bearer: [] }],
      parameters: [
        query('lql', 'LQL; empty: every event'),
        query('start', 'ISO 8601 or Unix milliseconds, included; default: an hour before end (unless lql has t:)'),
        query('end', 'ISO 8601 or Unix milliseconds, excluded; default: now'),
        query('limit', `Rows per page, 1 to ${SEARCH_MAX_LIMIT} (default ${SEARCH_DEFAULT_LIMIT})`, {
          type: 'string',
          pattern: '^[0-9]+$',
        }),
        query('cursor', 'The cursor of the previous answer'),
      ],
      responses: {
        '200': { description: 'The page', content: { 'application/json': { schema: ref('SearchAnswer') } } },
        '400': error('Bad LQL (location lql:1:<column>) or a bad parameter'),
        '401': error('No key, or an unknown key'),
        '403': error('The key lacks the scope'),
        '404': error('Unknown source'),
        '503': error('The database is unavailable'),
        '504': error('The query ran past QUERY_TIMEOUT_MS'),
      },
    },
  },
};
