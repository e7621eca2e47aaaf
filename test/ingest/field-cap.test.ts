/**
 * The cap on fields of one source's schema (MAX_FIELDS_PER_SOURCE), and the bound on the work of
 * "did you mean" (issue 25, finding 4).
 */
import assert from 'node:assert/strict';
import request from 'supertest';
import { MAX_SUGGEST_CELLS_PER_CALL, suggest, withSuggestionBudget } from '../../src/sql/errors.js';
import { countFields } from '../../src/ingest/normalise.js';
import { MAX_FIELDS_PER_SOURCE } from '../../src/inputLimits.js';
import { servedTestApp } from '../support/http.js';

const keys = (prefix: string, n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, i]));

/** A new source of the served test app (created before the suite's tests), with ingest into it and a count of its schema's fields. */
function ownSource(prefix: string) {
  const t = servedTestApp();
  const name = `${prefix}-${Date.now().toString(36)}`;
  const ingest = (events: object[]) => request(t.app).post(`/api/logs?source_name=${name}`).set('X-API-KEY', t.keys.admin).send(events);
  const schemaFields = async () => countFields((await t.context.sources.get(name)).schema);
  before(async () => {
    await request(t.app).post('/api/sources').set('X-API-KEY', t.keys.admin).send({ name }).expect(201);
  });
  return { ingest, schemaFields };
}

describe('the fields of one source', function () {
  this.timeout(30_000);
  const { ingest, schemaFields } = ownSource('field-cap');

  it('when one event would take the schema past the cap, then 406 for it naming the limit, and the others are stored', async () => {
    const before = await schemaFields();
    const res = await ingest([
      { event_message: 'small', metadata: { a: 1 } },
      { event_message: 'wide', metadata: keys('k', MAX_FIELDS_PER_SOURCE) },
    ]);
    assert.equal(res.status, 406, JSON.stringify(res.body).slice(0, 300));
    assert.equal(res.body.count, 1);
    assert.equal(res.body.error.errors[0].location, '1');
    assert.match(res.body.error.errors[0].message, new RegExp(`past ${MAX_FIELDS_PER_SOURCE} fields`));
    assert.ok((await schemaFields()) <= before + 2, 'the refused event left no field behind');
  });

  it('when a schema is at the cap, then events with its fields are stored and events with new ones are refused', async () => {
    const room = MAX_FIELDS_PER_SOURCE - (await schemaFields()) - 1; // `metadata.wide` itself is a field
    await ingest([{ event_message: 'fill', metadata: { wide: keys('f', room) } }]).expect(200);
    assert.equal(await schemaFields(), MAX_FIELDS_PER_SOURCE);
    await ingest([{ event_message: 'same fields', metadata: { wide: { f0: 7, f1: 8 } } }]).expect(200);
    const res = await ingest([{ event_message: 'one more', metadata: { brand_new: 1 } }]).expect(406);
    assert.match(res.body.error.errors[0].message, /limit of one source/);
  });
});

describe('the field cap counts only new fields', function () {
  this.timeout(30_000);
  const { ingest, schemaFields } = ownSource('field-room');

  before(async () => {
    // Ten fields of room left: `metadata.fill` and its keys take the rest.
    const room = MAX_FIELDS_PER_SOURCE - (await schemaFields()) - 1 - 10;
    await ingest([{ event_message: 'fill', metadata: { fill: keys('f', room) } }]).expect(200);
  });

  it('when events of one batch repeat the keys an earlier one added near the cap, then all are stored', async () => {
    const nested = { event_message: 'nested', metadata: { again: keys('x', 5) } };
    const res = await ingest([nested, nested, nested]);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    assert.equal(res.body.count, 3);
  });

  it('when an event has more top-level fields than the room left, then 406 for it, and one with known fields is stored', async () => {
    const res = await ingest([{ event_message: 'top', ...keys('top_', 1_000) }]);
    assert.equal(res.status, 406);
    assert.match(res.body.error.errors[0].message, /limit of one source/);
    await ingest([{ event_message: 'known', metadata: { fill: { f0: 1, f1: 2 } } }]).expect(200);
  });
});

describe('"did you mean" within its budget', () => {
  it('when a close name is among few candidates, then it is suggested', () => {
    assert.equal(suggest('event_mesage', ['timestamp', 'event_message', 'id']), 'event_message');
  });

  it('when the close name lies past the work one suggestion may do, then no suggestion rather than unbounded work', () => {
    const filler = Array.from({ length: MAX_SUGGEST_CELLS_PER_CALL / 100 + 10 }, (_, i) => `zzzzzzzzz${i % 10}`);
    assert.equal(suggest('event_mesage', [...filler, 'event_message']), undefined);
  });

  it('when one translation asks for many suggestions, then together they stay within its budget', () => {
    const candidates = Array.from({ length: 2_000 }, (_, i) => `field_${String(i).padStart(6, '0')}`);
    let found = 0;
    withSuggestionBudget(() => {
      for (let i = 0; i < 100; i++) if (suggest(`field_${String(i).padStart(6, '0')}x`, candidates) !== undefined) found++;
    });
    // 2,000 candidates × 13 × 14 cells each: about 8 suggestions fit in the translation's budget.
    assert.ok(found > 0 && found < 100, `suggestions made: ${found}`);
  });
});
