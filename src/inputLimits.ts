/**
 * The limits the API promises (docs/API.md, "Limits") and the rule for resource names, each
 * defined once: the HTTP layer, validation, the translator and the caches import them from here,
 * so a limit cannot differ between the place that refuses an input and the places sized for it.
 * This module imports nothing, so any layer may use it.
 */

/** Request body of ingest routes, before and after decompression. */
export const INGEST_BODY_LIMIT = 10 * 1024 * 1024;

/**
 * security: events in one ingest request (JSON array or batch, NDJSON lines, OTLP log records).
 * The byte limit alone let 10 MB of `[{},{},…]` carry 3.4 million events: 53 s of work in one
 * request, `/health` waiting 35 s meanwhile (issue 25). Shippers batch far fewer (OpenTelemetry
 * exporters 512, pino-logflare about 100); past the limit the answer is 413 and nothing is stored.
 */
export const MAX_EVENTS_PER_REQUEST = 20_000;

/**
 * security: JSON objects and arrays in one ingest body (OTLP: protobuf messages), counted by a
 * scan of the bytes before anything is parsed. JSON.parse builds every object synchronously: 3.4
 * million empty ones took 5.6 s on this machine with the event loop held. 25 per event at the
 * event limit; a real 10 MB batch of Supabase events holds far fewer. Past it: 413.
 */
export const MAX_VALUES_PER_REQUEST = 500_000;

/**
 * security: fields of one source's schema, records and their fields at every depth counted.
 * Nothing bounded it: one batch of 100,000 distinct keys made a 4.8 MB schema that every later
 * translation and "did you mean" worked through (issue 25). An event that would take a schema
 * past it is invalid (406 for that event, the others stored). The largest default schema
 * (cloudflare.logs.prod) has 88.
 */
export const MAX_FIELDS_PER_SOURCE = 5_000;

/** Request body of every other route, before and after decompression. */
export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Request head (URL and headers). Node refuses heads over 16 KB with a bare 431, but a GET may
 * carry a sandboxed `sql` of up to MAX_QUERY_BYTES in its query string (up to three times that
 * once URL-encoded), so the head limit is raised to fit it.
 */
export const MAX_HEADER_BYTES = 512 * 1024;

/**
 * An endpoint's `query` and a caller's sandboxed `sql`, in UTF-8 bytes. The lexer refuses larger
 * input before any work; the translation cache sizes its keys for it.
 */
export const MAX_QUERY_BYTES = 100 * 1024;

/** One parameter value, in UTF-8 bytes. */
export const MAX_PARAMETER_VALUE_BYTES = 64 * 1024;

/** Deepest nesting of SQL expressions and queries: the parser stops here instead of overflowing the stack. */
export const MAX_SQL_NESTING = 200;

/** How deep endpoints may read endpoints: `a` reading `b` is one level. */
export const MAX_ENDPOINT_DEPTH = 5;

/**
 * security: max rows bound the number of rows, not their size. One `string_agg` over a cross join
 * of CTEs builds a value of hundreds of MB in well under the time limit; `pg` buffers a whole row
 * before parsing it, so without a byte cap one request can take the process past a gigabyte.
 * Past this many bytes of result the connection is dropped and the caller gets 400.
 */
export const MAX_RESULT_BYTES = 64 * 1024 * 1024;

/** Longest name of an endpoint or a source. */
export const MAX_NAME_LENGTH = 200;

/**
 * Names of endpoints and sources: letters, digits, `_`, `.` and `-`. They appear bare in URLs
 * (`/api/endpoints/query/<name>`) and as table names in queries, so nothing needs escaping. The
 * body schemas (src/endpoints/definition.ts, src/sources/body.ts) check it with MAX_NAME_LENGTH.
 */
export const NAME_RE = /^[A-Za-z0-9_.-]+$/;

/** The name rule in words, for the 422 that refuses a name. */
export const NAME_RULE = `1 to ${MAX_NAME_LENGTH} characters of letters, digits, "_", "." or "-"`;
