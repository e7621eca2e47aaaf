/**
 * security: the shape of a protobuf ExportLogsServiceRequest read from its wire format before
 * protobufjs decodes it. Decoding builds every message synchronously and recursively: 10 MB of
 * 5 million empty log records held the event loop 68 s and took 2 GB, and an `arrayValue` nested
 * 50,000 deep overflowed the stack (issue 25). This walk is iterative, allocates nothing per
 * message, and stops as soon as a limit is passed: log records (MAX_EVENTS_PER_REQUEST, 413),
 * messages (MAX_VALUES_PER_REQUEST, 413) and nesting (MAX_OTLP_NESTING, 400).
 *
 * Only the messages that hold messages are described (opentelemetry-proto, logs/v1 and
 * common/v1); other fields are skipped by their wire type. Malformed bytes end the walk, and the
 * decoder then reports them.
 */
import { BadRequestError, tooManyInRequest } from '../errors.js';
import { MAX_EVENTS_PER_REQUEST, MAX_VALUES_PER_REQUEST } from '../inputLimits.js';
import { MAX_NESTING } from './storable.js';

/** Message nesting allowed: an AnyValue in an array is two messages deep per level of the value. */
export const MAX_OTLP_NESTING = 2 * MAX_NESTING + 8;

type MessageType =
  'request' | 'resourceLogs' | 'resource' | 'scopeLogs' | 'scope' | 'logRecord' | 'keyValue' | 'anyValue' | 'arrayValue' | 'kvList';

/** For each message type, its fields that are messages: field number → type. */
const CHILDREN: Record<MessageType, Partial<Record<number, MessageType>>> = {
  request: { 1: 'resourceLogs' },
  resourceLogs: { 1: 'resource', 2: 'scopeLogs' },
  resource: { 1: 'keyValue' },
  scopeLogs: { 1: 'scope', 2: 'logRecord' },
  scope: { 3: 'keyValue' },
  logRecord: { 5: 'anyValue', 6: 'keyValue' },
  keyValue: { 2: 'anyValue' },
  anyValue: { 5: 'arrayValue', 6: 'kvList' },
  arrayValue: { 1: 'anyValue' },
  kvList: { 1: 'keyValue' },
};

/** Throws 413 or 400 when the request is past a limit; otherwise returns its number of log records. */
export function checkOtlpProtobuf(bytes: Uint8Array): number {
  const types: MessageType[] = ['request'];
  const ends: number[] = [bytes.length];
  let records = 0;
  let messages = 0;
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 70 && pos < bytes.length; shift += 7) {
      const b = bytes[pos++];
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
    return -1;
  };
  while (pos < bytes.length) {
    while (pos >= ends[ends.length - 1] && ends.length > 1) {
      ends.pop();
      types.pop();
    }
    const tag = varint();
    if (tag < 0) break;
    const wireType = tag % 8;
    if (wireType === 0) {
      if (varint() < 0) break;
    } else if (wireType === 1) pos += 8;
    else if (wireType === 5) pos += 4;
    else if (wireType === 2) {
      const length = varint();
      if (length < 0 || pos + length > ends[ends.length - 1]) break;
      const child = CHILDREN[types[types.length - 1]][Math.floor(tag / 8)];
      if (child) {
        if (++messages > MAX_VALUES_PER_REQUEST) throw tooManyInRequest('OTLP messages', MAX_VALUES_PER_REQUEST);
        if (child === 'logRecord' && ++records > MAX_EVENTS_PER_REQUEST) throw tooManyInRequest('log records', MAX_EVENTS_PER_REQUEST);
        if (types.length >= MAX_OTLP_NESTING) throw otlpTooDeep();
        types.push(child);
        ends.push(pos + length);
      } else pos += length;
    } else break;
  }
  return records;
}

/** 400 for an OTLP body whose values nest past MAX_OTLP_NESTING messages. */
export function otlpTooDeep(): BadRequestError {
  return new BadRequestError(`An OTLP value is nested more than ${MAX_NESTING} levels deep; nothing was stored.`, [
    { domain: 'body', reason: 'tooDeep', message: `nested more than ${MAX_NESTING} levels`, location: 'body' },
  ]);
}
