/**
 * The body of the sources API (docs/API.md, "Sources") as a schema: what the routes and the CLI
 * validate, and what the OpenAPI document shows.
 */
import { Type, type Static } from '@sinclair/typebox';
import { compile, notAnObject, problem, type Check } from '../http/validation.js';
import { BadRequestError, UnprocessableError } from '../errors.js';
import { MAX_NAME_LENGTH, NAME_RE, NAME_RULE } from '../inputLimits.js';

export const MAX_RETENTION_DAYS = 3650;

/** Sent back unchanged from a GET: accepted and ignored, so GET → edit → PUT works. */
const readOnly = Type.Optional(Type.Unknown({ readOnly: true, description: 'Ignored when sent.' }));

/** The body of `PUT`/`PATCH /api/sources/:idOrName`; `POST` needs the name (`SourceCreateSchema`). */
export const SourceBodySchema = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        pattern: NAME_RE.source,
        maxLength: MAX_NAME_LENGTH,
        description: 'Unique name; queries read the source as a table of this name.',
        ...problem('invalidName', `A source name must be ${NAME_RULE}.`),
      }),
    ),
    retention_days: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_RETENTION_DAYS,
        description: 'Days of events kept; default RETENTION_DAYS.',
        ...problem('invalidRetention', `retention_days must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}.`),
      }),
    ),
    // Its shape and rules (paths in the source's schema, at most 16) are checked with the schema at
    // hand by parseHotLeaves (src/sources/hotLeafInput.ts); docs/API.md, "Hot leaves".
    hot_leaves: Type.Optional(
      Type.Unknown({
        description:
          'Leaves of single records kept as typed columns: [{"path": "metadata.request.path", "type": "STRING", "index": "project"}].',
      }),
    ),
    // Which columns exist (event_message, STRING hot leaves) is checked with the source at hand
    // (SourceService.setSearchIndex); docs/API.md, "Search indexes".
    search_index: Type.Optional(
      Type.Array(Type.String({ maxLength: 1000 }), {
        maxItems: 32,
        description:
          'Text columns with a trigram index for message search: "event_message" (the default) and STRING hot leaves by path; [] for none.',
        ...problem('invalidSearchIndex', 'search_index must be a list of column names like ["event_message", "metadata.request.path"].'),
      }),
    ),
    id: readOnly,
    table_name: readOnly,
    schema: readOnly,
    created_at: readOnly,
    updated_at: readOnly,
  },
  {
    additionalProperties: false,
    ...problem('unknownField', 'Unknown field "{field}": a source has name, retention_days, hot_leaves and search_index.'),
  },
);
export const SourceCreateSchema = { ...SourceBodySchema, required: ['name'] } as typeof SourceBodySchema;
export const checkSourceCreate = compile(SourceCreateSchema);
export const checkSourceUpdate = compile(SourceBodySchema);

/** The writable fields of a body valid against its schema: 400 when not an object, else 422 naming the first problem. */
export function sourceBody(
  body: unknown,
  check: Check,
): { name?: string; retention_days?: number; hot_leaves?: unknown; search_index?: string[] } {
  const failures = check(body);
  if (notAnObject(failures)) {
    throw new BadRequestError('The request body must be a JSON object like {"name": "my.source", "retention_days": 30}.', [
      { domain: 'body', reason: 'invalidBody', message: 'expected a JSON object', location: 'body' },
    ]);
  }
  const first = failures.find((f) => f.reason === 'unknownField') ?? failures[0];
  if (first) {
    throw new UnprocessableError(first.message, [
      { domain: 'sources', reason: first.reason, message: first.message, location: first.location },
    ]);
  }
  const { name, retention_days, hot_leaves, search_index } = body as Static<typeof SourceBodySchema>;
  return {
    name,
    ...(retention_days !== undefined && { retention_days }),
    ...(hot_leaves !== undefined && { hot_leaves }),
    ...(search_index !== undefined && { search_index }),
  };
}
