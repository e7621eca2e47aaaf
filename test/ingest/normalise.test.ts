import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normaliseEvents } from '../../src/ingest/normalise.js';
import { toStoredShape } from '../../src/sources/shape.js';
import { inferField, mergeFieldMaps, type FieldMap, type FieldSchema } from '../../src/sources/schema.js';

/** What normalisation must produce, written the plain way: toStoredShape per value, inferField + mergeFieldMaps per event. */
function reference(events: Record<string, unknown>[]): { metadata: unknown[]; bodies: unknown[]; fields: FieldMap } {
  let fields: FieldMap = {};
  const metadata: unknown[] = [];
  const bodies: unknown[] = [];
  for (const e of events) {
    const seen: Record<string, FieldSchema> = {};
    const m = inferField(e.metadata);
    if (m) seen.metadata = m;
    let body: Record<string, unknown> | null = null;
    for (const [k, v] of Object.entries(e)) {
      if (['id', 'timestamp', 'event_message', 'message', 'project', 'metadata'].includes(k)) continue;
      body ??= {};
      body[k] = toStoredShape(v);
      const f = inferField(v);
      if (f) seen[k] = mergeField2(seen[k], f);
    }
    fields = mergeFieldMaps(fields, seen);
    metadata.push(e.metadata === undefined || e.metadata === null ? null : toStoredShape(e.metadata));
    bodies.push(body);
  }
  return { metadata, bodies, fields };
}
const mergeField2 = (a: FieldSchema | undefined, b: FieldSchema) => mergeFieldMaps(a ? { x: a } : {}, { x: b }).x!;

/** Mostly identifiers (fieldName is the identity, so the reference compares directly); "x-y" exercises renaming. */
const key = fc.constantFrom('a', 'b', 'path', 'status', 'headers', 'cf', 'n', 'x-y');
const leaf = fc.oneof(
  fc.string({ maxLength: 5 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 3 })),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4 }),
}));
const event = fc.record(
  {
    metadata: fc.oneof(fc.dictionary(key, value, { maxKeys: 4 }), fc.constant(undefined)),
    level: fc.oneof(value, fc.constant(undefined)),
    context: fc.oneof(fc.dictionary(key, value, { maxKeys: 3 }), fc.constant(undefined)),
  },
  { requiredKeys: [] },
);

describe('normaliseEvents (one walk per event)', () => {
  it('when given any events, then the stored values and the schema equal toStoredShape and inferField + mergeFieldMaps', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), (raw) => {
        const events = raw.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)));
        const got = normaliseEvents(events, { nowMs: Date.now(), retentionDays: 30 });
        assert.deepEqual(got.errors, []);
        const want = reference(events);
        assert.deepEqual(
          got.rows.map((r) => r.metadata),
          want.metadata,
        );
        assert.deepEqual(
          got.rows.map((r) => r.body),
          want.bodies,
        );
        assert.deepEqual(JSON.parse(JSON.stringify(got.fields)), JSON.parse(JSON.stringify(want.fields)));
        // Reshaping in place (the ingest route's own parsed events) gives the same rows and schema.
        const reused = normaliseEvents(structuredClone(events), { nowMs: Date.now(), retentionDays: 30, reuseInput: true });
        assert.deepEqual(
          reused.rows.map((r) => [r.metadata, r.body]),
          got.rows.map((r) => [r.metadata, r.body]),
        );
        assert.deepEqual(JSON.parse(JSON.stringify(reused.fields)), JSON.parse(JSON.stringify(got.fields)));
      }),
      { numRuns: 500 },
    );
  });

  it('when string checks are skipped (no suspicious escape in the body), then the result is the same for clean events', () => {
    const events = [{ metadata: { a: { b: 'x' } }, level: 'info' }];
    const a = normaliseEvents(events, { nowMs: 0, retentionDays: 1 });
    const b = normaliseEvents(events, { nowMs: 0, retentionDays: 1, checkStrings: false });
    assert.deepEqual(
      a.rows.map((r) => r.metadata),
      b.rows.map((r) => r.metadata),
    );
    assert.deepEqual(a.fields, b.fields);
  });
});
