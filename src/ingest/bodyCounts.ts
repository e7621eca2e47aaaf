/**
 * security: how many events and how many JSON objects and arrays an ingest body holds, found by
 * one scan of its text before JSON.parse, which builds every object synchronously and cannot be
 * interrupted (3.4 million `{}` in 10 MB: 5.6 s with the event loop held, issue 25). A body past
 * MAX_EVENTS_PER_REQUEST or MAX_VALUES_PER_REQUEST answers 413 without being parsed.
 *
 * The scan does not validate: on text that is not JSON its counts are meaningless but finite,
 * and JSON.parse then reports the syntax error. It reads one character at a time outside strings
 * and skips strings with indexOf.
 */
import { tooManyInRequest } from '../errors.js';
import { MAX_EVENTS_PER_REQUEST, MAX_VALUES_PER_REQUEST } from '../inputLimits.js';

export interface BodyCounts {
  /** Events of a JSON body: items of a top-level array or of a top-level `"batch"` array, else 1. */
  events: number;
  /** Objects and arrays at any depth. */
  containers: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The counts of a JSON body, or of NDJSON text (`ndjson`: its events are its lines, counted by
 * the parser, so only objects and arrays are counted here). The scan stops as soon as a count
 * is past its limit: hostile input costs no more than a body at the limit.
 */
export function jsonBodyCounts(text: string, ndjson = false): BodyCounts {
  let depth = 0;
  let containers = 0;
  let events = 0;
  /** Depth of the array whose items are events (1: a top-level array, 2: a top-level "batch"); 0: none yet. */
  let eventDepth = 0;
  let sawBatch = false;
  let expectItem = false;
  let topIsObject = false;
  /** The last string at depth 1 of a top-level object: the key of the value that follows. */
  let key = '';
  const item = (): void => {
    if (expectItem && depth === eventDepth) {
      events++;
      expectItem = false;
    }
  };
  const maxEvents = ndjson ? Infinity : MAX_EVENTS_PER_REQUEST;
  for (let i = 0; i < text.length && containers <= MAX_VALUES_PER_REQUEST && events <= maxEvents; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20) continue;
    if (c === QUOTE) {
      item();
      const start = i;
      i = stringEnd(text, i);
      if (depth === 1 && topIsObject) key = i - start === 6 ? text.slice(start + 1, i) : '';
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      item();
      containers++;
      depth++;
      if (depth === 1) {
        topIsObject = c === OPEN_OBJECT;
        if (!topIsObject) [eventDepth, expectItem] = [1, true];
      } else if (depth === 2 && topIsObject && c === OPEN_ARRAY && key === 'batch') {
        [eventDepth, expectItem, sawBatch] = [2, true, true];
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === eventDepth) {
        expectItem = false;
        if (eventDepth === 2) eventDepth = 0;
      }
      depth--;
    } else if (c === COMMA) {
      if (depth === eventDepth) expectItem = true;
    } else if (c !== COLON) {
      item();
    }
  }
  return { events: ndjson ? 0 : topIsObject && !sawBatch ? 1 : events, containers };
}

/** The index of the quote that closes the string opened at `open` (or the end of the text). */
function stringEnd(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const close = text.indexOf('"', from);
    if (close < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return close;
    from = close + 1;
  }
}

/** 413 when `counts` are past the limits of one request. */
export function checkBodyCounts(counts: BodyCounts): void {
  if (counts.events > MAX_EVENTS_PER_REQUEST) throw tooManyInRequest('events', MAX_EVENTS_PER_REQUEST);
  if (counts.containers > MAX_VALUES_PER_REQUEST) throw tooManyInRequest('JSON objects and arrays', MAX_VALUES_PER_REQUEST);
}
