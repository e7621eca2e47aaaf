import assert from 'node:assert/strict';
import { SqlError, SqlLimitError, SqlSyntaxError, SqlUnsupportedError } from '../../src/sql/index.js';
import { expectTranslation } from '../support/translation.js';
import { parseQuery } from '../../src/sql/parser.js';

describe('errors', () => {
  const unsupported: [string, RegExp][] = [
    ['select * from t pivot (sum(x) for y in (1))', /PIVOT is not supported/],
    ['merge t using s on true when matched then delete', /MERGE is not supported/],
    ['insert into t values (1)', /INSERT is not supported/],
    ['create table t (x int64)', /CREATE is not supported/],
    ['delete from t where true', /DELETE is not supported/],
    ['select x from t window w as (partition by y)', /WINDOW is not supported/],
    ['select row_number() over w from t', /named windows/],
    ['select a from t natural join u', /NATURAL JOIN is not supported/],
    ['with recursive r as (select 1) select * from r', /WITH RECURSIVE is not supported/],
    ['select 1 as x from t for update', /FOR .* is not supported/],
    ['select 1; select 2', /only one statement is allowed/],
  ];
  for (const [bq, message] of unsupported) {
    it(`when ${bq.split(' ').slice(0, 4).join(' ')}…, then SqlUnsupportedError names the construct`, async () => {
      await expectTranslation(bq).toFail(SqlUnsupportedError, message);
    });
  }

  it('when the syntax is wrong, then line, column and a snippet with a caret', () => {
    try {
      parseQuery('select a\nfrom t\nwhere a = = 1');
      assert.fail('should throw');
    } catch (e) {
      assert.ok(e instanceof SqlSyntaxError);
      assert.equal(e.line, 3);
      assert.equal(e.column, 11);
      assert.equal(e.snippet, 'where a = = 1\n          ^');
    }
  });

  it('when parentheses nest 10,000 deep, then SqlLimitError quickly', () => {
    const started = Date.now();
    assert.throws(() => parseQuery(`select ${'('.repeat(10_000)}1${')'.repeat(10_000)}`), SqlLimitError);
    assert.throws(() => parseQuery(`select ${Array.from({ length: 5000 }, () => '1').join(' + ')}`), SqlLimitError);
    assert.throws(() => parseQuery(`select ${'- '.repeat(5000)}1`), SqlLimitError);
    assert.ok(Date.now() - started < 1000);
  });

  it('when nesting stays within 200 levels, then it parses', () => {
    parseQuery(`select ${'('.repeat(150)}1${')'.repeat(150)}`);
  });

  it('when the query is over 100 KB, then SqlLimitError', () => {
    assert.throws(() => parseQuery(`select 1 -- ${'x'.repeat(110_000)}`), SqlLimitError);
  });

  it('when a long OR chain is written, then it stays flat and parses', () => {
    parseQuery(`select 1 from t where ${Array.from({ length: 1000 }, (_, i) => `x = ${i}`).join(' or ')}`);
  });

  it('errors are SqlError subclasses with positions', async () => {
    await expectTranslation('select from').toFail(SqlSyntaxError, /line 1, column 8/);
    assert.ok(new SqlSyntaxError('x', 'abc', 1) instanceof SqlError);
  });
});
