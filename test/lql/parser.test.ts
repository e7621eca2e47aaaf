/**
 * The LQL parser on any input: it answers rules or an LqlError whose column is inside the text,
 * never another exception; and `lql=` on a sandboxable endpoint runs over its CTEs.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import request from 'supertest';
import { LqlError, parseLql } from '../../src/lql/index.js';
import { testApp, type TestApp, withKey } from '../support/http.js';

const PIECES = [
  'm.',
  'metadata.',
  't:',
  'c:',
  's:',
  'f:',
  ':',
  ':>',
  ':>=',
  ':<',
  ':~',
  ':@>',
  ':@>~',
  '..',
  '{',
  '}',
  '"',
  '\\',
  '-',
  '~',
  '@',
  ' ',
  'a',
  'x1',
  '500',
  '2024-03-17',
  'T10:00:00',
  'Z',
  'NULL',
  'true',
  '(',
  ')',
  'count',
  'group_by',
  '*',
  '\u0000',
  'é',
];

describe('LQL parser', () => {
  it('when given any text, then it returns rules or throws an LqlError with a column inside the text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 30 }), (pieces) => {
        const text = pieces.join('');
        try {
          parseLql(text);
        } catch (err) {
          assert.ok(err instanceof LqlError, `${(err as Error).name}: ${(err as Error).message} for ${JSON.stringify(text)}`);
          assert.ok(err.column >= 1 && err.column <= text.length + 1, `column ${err.column} of ${JSON.stringify(text)}`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('when a clause is wrong, then the column is where the clause or the value starts', () => {
    const column = (text: string) => {
      try {
        parseLql(text);
      } catch (err) {
        return (err as LqlError).column;
      }
      return undefined;
    };
    assert.equal(column('error m.status:'), 16); // where the value is missing
    assert.equal(column('ok t:>yesterdayish'), 7);
    assert.equal(column('ok "open'), 4);
    assert.equal(column('a b c:nope(x)'), 7);
  });

  it('when more than 100 clauses are given, then it is refused as the original refuses them', () => {
    assert.doesNotThrow(() => parseLql(Array(100).fill('w').join(' ')));
    assert.throws(() => parseLql(Array(101).fill('w').join(' ')), /more than 100 clauses/);
  });
});

describe('LQL on a sandboxable endpoint: lql=', function () {
  this.timeout(20_000);
  let t: TestApp;
  const name = `lql.endpoint.${process.pid}`;
  const run = (lql: string, extra: Record<string, string> = {}) =>
    request(t.app)
      .get(`/api/endpoints/query/${name}`)
      .query({ lql, ...extra })
      .set('X-API-KEY', t.keys.query);

  before(async () => {
    t = await testApp();
    const query =
      "with errors as (select 'test error' as err, 123 as code, timestamp '2026-01-01 10:00:00' as timestamp union all select 'other', 7, timestamp '2026-01-01 10:05:00') select err, code from errors";
    await withKey(t.app, t.keys.admin).post('/api/endpoints', { name, query, sandboxable: true }).expect(201);
  });
  after(async () => {
    await withKey(t.app, t.keys.admin).delete(`/api/endpoints/${name}`);
  });

  it('when lql selects and filters the CTE, then its rows come', async () => {
    assert.deepEqual((await run('s:err').expect(200)).body.result, [{ err: 'test error' }, { err: 'other' }]);
    assert.deepEqual((await run('code:>100 s:err@e').expect(200)).body.result, [{ e: 'test error' }]);
    assert.deepEqual((await run('err:~^oth s:code').expect(200)).body.result, [{ code: 7 }]);
  });

  it('when lql is a chart, then the CTE is counted per period', async () => {
    const res = await run('c:count(*) c:group_by(t::hour)').expect(200);
    assert.deepEqual(res.body.result, [{ timestamp: Date.parse('2026-01-01T10:00:00Z') * 1000, value: 2 }]);
  });

  it('when sql is given too, then sql wins, as in the original', async () => {
    const res = await run('s:err', { sql: 'select code from errors order by code' }).expect(200);
    assert.deepEqual(res.body.result, [{ code: 7 }, { code: 123 }]);
  });

  it('when lql names a column the CTE lacks or does not parse, then 400 at its column', async () => {
    const unknown = await run('s:err nope:1').expect(400);
    assert.equal(unknown.body.error.errors[0].location, 'lql:1:7');
    const bad = await run('s:err "open').expect(400);
    assert.equal(bad.body.error.errors[0].location, 'lql:1:7');
  });
});
