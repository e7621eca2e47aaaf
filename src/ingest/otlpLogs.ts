/**
 * OTLP/HTTP logs (`POST /v1/logs`) read into ordinary ingest events, one per log record.
 *
 * Protobuf bodies are decoded with the message classes protobufjs generated from the official
 * opentelemetry-proto definitions, as shipped in `@opentelemetry/otlp-transformer` (its
 * `build/src/generated/root.js`; 0.214.0 is the last release whose generated root still holds
 * the logs messages, hence the exact version in package.json). JSON bodies follow the OTLP/JSON
 * mapping (lowerCamelCase keys, 64-bit integers as strings or numbers, trace and span ids as hex).
 *
 * A record becomes (docs/INGEST.md, "OTLP"):
 *   timestamp      ← time_unix_nano, else observed_time_unix_nano, else the time of ingest
 *   event_message  ← body (a string as is; any other value as its JSON text)
 *   metadata       ← { attributes, resource, scope: {name, version, attributes}, severity_text,
 *                      severity_number, trace_id, span_id, flags, event_name } (absent parts left out)
 * Attribute keys are stored like any other key (`service.name` → `service_name`, shape.ts).
 */
import { createRequire } from 'node:module';
import { BadRequestError } from '../errors.js';
import { checkBodyCounts, jsonBodyCounts } from './bodyCounts.js';
import { checkOtlpProtobuf, MAX_OTLP_NESTING, otlpTooDeep } from './otlpCounts.js';
import { MAX_DATE_MICROS, microsToIso } from './timestamp.js';
import { setOwn } from '../sources/shape.js';

type Message = Record<string, unknown>;
interface MessageClass {
  decode(bytes: Uint8Array): Message;
  encode(message: Message): { finish(): Uint8Array };
  fromObject(object: Message): Message;
}

const generated = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: {
    proto: { collector: { logs: { v1: { ExportLogsServiceRequest: MessageClass; ExportLogsServiceResponse: MessageClass } } } };
  };
};
const { ExportLogsServiceRequest, ExportLogsServiceResponse } = generated.opentelemetry.proto.collector.logs.v1;

export type OtlpEncoding = 'json' | 'protobuf';

/** `application/x-protobuf` (or `application/protobuf`) or `application/json`; undefined for anything else. */
export function otlpEncodingOf(contentType: string | undefined): OtlpEncoding | undefined {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-protobuf' || type === 'application/protobuf') return 'protobuf';
  if (type === 'application/json' || type === '') return 'json';
  return undefined;
}

/** The events of an ExportLogsServiceRequest, in the order of its records; 400 when the body is not one. */
export function otlpLogEvents(bytes: Buffer, encoding: OtlpEncoding): Record<string, unknown>[] {
  const request = encoding === 'protobuf' ? decodeProtobuf(bytes) : decodeJson(bytes);
  const events: Record<string, unknown>[] = [];
  for (const resourceLogs of list(request.resourceLogs)) {
    const resource = attributes((resourceLogs as Message | null)?.resource && ((resourceLogs as Message).resource as Message).attributes);
    for (const scopeLogs of list((resourceLogs as Message | null)?.scopeLogs)) {
      const scope = scopeOf((scopeLogs as Message | null)?.scope as Message | null | undefined);
      for (const record of list((scopeLogs as Message | null)?.logRecords)) {
        events.push(recordEvent((record ?? {}) as Message, resource, scope));
      }
    }
  }
  return events;
}

/** The ExportLogsServiceResponse: `partial_success` only when some records were not stored. */
export function otlpResponse(encoding: OtlpEncoding, notStored: number, errorMessage: string): { contentType: string; body: Buffer } {
  if (encoding === 'protobuf') {
    const message = notStored > 0 ? { partialSuccess: { rejectedLogRecords: notStored, errorMessage } } : {};
    return {
      contentType: 'application/x-protobuf',
      body: Buffer.from(ExportLogsServiceResponse.encode(ExportLogsServiceResponse.fromObject(message)).finish()),
    };
  }
  // OTLP/JSON writes 64-bit integers as decimal strings.
  const message = notStored > 0 ? { partialSuccess: { rejectedLogRecords: String(notStored), errorMessage } } : {};
  return { contentType: 'application/json', body: Buffer.from(JSON.stringify(message)) };
}

function decodeProtobuf(bytes: Buffer): Message {
  checkOtlpProtobuf(bytes);
  try {
    return ExportLogsServiceRequest.decode(bytes);
  } catch (err) {
    throw notOtlp(`not a protobuf ExportLogsServiceRequest: ${(err as Error).message}`);
  }
}

function decodeJson(bytes: Buffer): Message {
  let value: unknown;
  const text = bytes.toString('utf8');
  // Its log records are counted once decoded (IngestService.ingest): objects and arrays bound the parse.
  checkBodyCounts(jsonBodyCounts(text, true));
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw notOtlp(`not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw notOtlp('not a JSON object');
  const request = value as Message;
  if (request.resourceLogs !== undefined && !Array.isArray(request.resourceLogs)) throw notOtlp('"resourceLogs" must be an array');
  return request;
}

function notOtlp(detail: string): BadRequestError {
  return new BadRequestError(`The request body is not an OTLP ExportLogsServiceRequest: ${detail}.`, [
    { domain: 'body', reason: 'parseError', message: detail, location: 'body' },
  ]);
}

function recordEvent(
  record: Message,
  resource: Record<string, unknown> | undefined,
  scope: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const event: Record<string, unknown> = {};
  const nanos = nonZero(record.timeUnixNano) ?? nonZero(record.observedTimeUnixNano);
  // Past what a Date holds (`"99999999999999999999999"`, which threw a 500): as a unix number,
  // which normalisation reads and drops as too far in the future, like any other such record.
  if (nanos !== undefined) event.timestamp = nanos / 1000n <= MAX_DATE_MICROS ? microsToIso(nanos / 1000n) : Number(nanos);
  else if (unreadable(record.timeUnixNano)) event.timestamp = record.timeUnixNano; // normalisation reports it
  const body = anyValue(record.body);
  if (body !== null && body !== undefined) event.event_message = typeof body === 'string' ? body : JSON.stringify(body);

  const metadata: Record<string, unknown> = {};
  const attrs = attributes(record.attributes);
  if (attrs) metadata.attributes = attrs;
  if (resource) metadata.resource = resource;
  if (scope) metadata.scope = scope;
  if (typeof record.severityText === 'string' && record.severityText !== '') metadata.severity_text = record.severityText;
  const severity = Number(record.severityNumber ?? 0);
  if (Number.isInteger(severity) && severity > 0) metadata.severity_number = severity;
  const traceId = hexId(record.traceId);
  if (traceId) metadata.trace_id = traceId;
  const spanId = hexId(record.spanId);
  if (spanId) metadata.span_id = spanId;
  const flags = Number(record.flags ?? 0);
  if (Number.isInteger(flags) && flags > 0) metadata.flags = flags;
  if (typeof record.eventName === 'string' && record.eventName !== '') metadata.event_name = record.eventName;
  if (Object.keys(metadata).length > 0) event.metadata = metadata;
  return event;
}

function scopeOf(scope: Message | null | undefined): Record<string, unknown> | undefined {
  if (!scope) return undefined;
  const out: Record<string, unknown> = {};
  if (typeof scope.name === 'string' && scope.name !== '') out.name = scope.name;
  if (typeof scope.version === 'string' && scope.version !== '') out.version = scope.version;
  const attrs = attributes(scope.attributes);
  if (attrs) out.attributes = attrs;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A list of KeyValue as an object (a later duplicate key wins, as OTLP leaves duplicates undefined); undefined when empty. */
function attributes(values: unknown, depth = 0): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const kv of list(values)) {
    if (typeof kv !== 'object' || kv === null) continue;
    const key = (kv as Message).key;
    if (typeof key !== 'string') continue;
    out ??= {};
    setOwn(out, key, anyValue((kv as Message).value, depth + 1)); // `__proto__` is an attribute like any other
  }
  return out;
}

/**
 * An AnyValue as plain JSON: the first of its fields that is set (decoded protobuf messages
 * default the others to null, OTLP/JSON leaves them out). int64 beyond 2^53 stays a decimal
 * string (a JSON number would change it), bytes become base64, NaN and ±Infinity their names.
 * perf: plain property tests, not the message's `value` oneof getter nor a search over key
 * names; this runs for every attribute value of every record.
 */
function anyValue(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null) return null;
  // OTLP/JSON reaches here unchecked by checkOtlpProtobuf: a value nested 50,000 deep overflowed the stack (a 500).
  if (depth > MAX_OTLP_NESTING) throw otlpTooDeep();
  const v = value as Message;
  if (v.stringValue != null) return typeof v.stringValue === 'string' ? v.stringValue : JSON.stringify(v.stringValue);
  if (v.intValue != null) return int64Value(v.intValue);
  if (v.kvlistValue != null) return attributes((v.kvlistValue as Message).values, depth + 1) ?? {};
  if (v.boolValue != null) return Boolean(v.boolValue);
  if (v.doubleValue != null) {
    const d = Number(v.doubleValue);
    return Number.isFinite(d) ? d : String(d);
  }
  if (v.arrayValue != null) return list((v.arrayValue as Message).values).map((item) => anyValue(item, depth + 1));
  if (v.bytesValue != null)
    return typeof v.bytesValue === 'string' ? v.bytesValue : Buffer.from(v.bytesValue as Uint8Array).toString('base64');
  return null;
}

/** A JSON number when it is one exactly, else the decimal string; null when unreadable. */
function int64Value(value: unknown): number | string | null {
  if (typeof value === 'number')
    return Number.isSafeInteger(value) ? value : Number.isFinite(value) ? String(BigInt(Math.trunc(value))) : null;
  if (isLong(value)) {
    // perf: from the two 32-bit halves; Long's own toString divides digit by digit.
    const n = (value.unsigned ? value.high >>> 0 : value.high) * 4294967296 + (value.low >>> 0);
    if (Number.isSafeInteger(n)) return n;
  }
  const big = toBigInt(value);
  if (big === undefined) return null;
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big.toString();
}

/** protobufjs's 64-bit integers (Long, or a plain {low, high, unsigned} without the long package). */
function isLong(value: unknown): value is { low: number; high: number; unsigned?: boolean } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { low?: unknown }).low === 'number' &&
    typeof (value as { high?: unknown }).high === 'number'
  );
}

/** uint64/int64 as protobufjs gives them (Long, number) or OTLP/JSON does (string, number). */
function toBigInt(value: unknown): bigint | undefined {
  if (value === null || value === undefined) return undefined;
  try {
    if (typeof value === 'bigint') return value;
    if (typeof value === 'number') return Number.isFinite(value) ? BigInt(Math.trunc(value)) : undefined;
    if (isLong(value)) {
      const high = BigInt(value.unsigned ? value.high >>> 0 : value.high);
      return (high << 32n) + BigInt(value.low >>> 0);
    }
    return typeof value === 'string' ? BigInt(value) : undefined;
  } catch {
    return undefined;
  }
}

function unreadable(value: unknown): boolean {
  return value !== null && value !== undefined && toBigInt(value) === undefined;
}

function nonZero(value: unknown): bigint | undefined {
  const n = toBigInt(value);
  return n !== undefined && n > 0n ? n : undefined;
}

/** Trace and span ids: bytes in protobuf, hex in OTLP/JSON; empty or all-zero ids are absent. */
function hexId(value: unknown): string | undefined {
  let hex: string | undefined;
  if (value instanceof Uint8Array) hex = Buffer.from(value).toString('hex');
  else if (typeof value === 'string') hex = value.toLowerCase();
  return hex && /[^0]/.test(hex) ? hex : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
