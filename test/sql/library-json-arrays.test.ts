/**
 * JSON and array functions, each row one of BigQuery's documented examples (GoogleSQL's reference, from which BigQuery's is generated: the google/zetasql repository, its docs folder), run on Postgres and compared with the documented
 * result. INT64 arrays come back as strings (docs/COMPATIBILITY.md).
 */
import { SqlLimitError, SqlSyntaxError } from '../../src/sql/errors.js';
import { expectTranslation } from '../support/translation.js';

const cases: [name: string, bq: string, rows: Record<string, unknown>[]][] = [
  [
    'JSON_QUERY / JSON_EXTRACT answer compact JSON, and SQL NULL for a JSON null',
    `select json_query('{"class": {"students": [{"name": "Jane"}]}}', '$') as a, json_query('{"class": {"students": [{"name": "Jane"}]}}', '$.class.students[0]') as b,
            json_extract('{"class": {"students": []}}', '$.class') as c, json_query('{"a": null}', "$.a") as d, json_query('{"a": null}', "$.b") as e,
            json_query("null", "$") as f, json_query('{"class": {"students": [{"name": "John"}, {"name": null}]}}', '$.class.students[1].name') as g`,
    [{ a: '{"class":{"students":[{"name":"Jane"}]}}', b: '{"name":"Jane"}', c: '{"students":[]}', d: null, e: null, f: null, g: null }],
  ],
  [
    'JSON_VALUE / JSON_EXTRACT_SCALAR',
    `select json_value('{"name": "Jakob", "age": "6"}', '$.name') as name, json_extract_scalar('{"name": "Jakob", "age": "6"}', '$.age') as age,
            json_value('{"fruits": ["apple", "banana"]}', '$.fruits') as fruits, json_value('{"a": null}', '$.a') as n`,
    [{ name: 'Jakob', age: '6', fruits: null, n: null }],
  ],
  [
    'JSON_QUERY_ARRAY / JSON_EXTRACT_ARRAY: compact elements; NULL for a non-array',
    `select json_query_array('[1, 2, 3]') as a, json_extract_array('{"fruits": ["apples", "oranges", "grapes"]}', '$.fruits') as b,
            json_query_array('[{"a": 1}, [2]]', '$') as c, json_query_array('{"a": "foo"}', '$') as d, json_query_array('}}', '$') as e`,
    [{ a: ['1', '2', '3'], b: ['"apples"', '"oranges"', '"grapes"'], c: ['{"a":1}', '[2]'], d: null, e: null }],
  ],
  [
    'JSON_VALUE_ARRAY / JSON_EXTRACT_STRING_ARRAY: scalars unquoted, a JSON null as NULL, NULL when an element is not scalar',
    `select json_value_array('["foo", "bar", "baz"]') as a, json_extract_string_array('{"fruits": ["apples", "oranges"]}', '$.fruits') as b,
            json_value_array('["foo", null]', '$') as c, json_value_array('[["foo"]]', '$') as d, json_value_array('{"a": ["foo"]}', '$.b') as e`,
    [{ a: ['foo', 'bar', 'baz'], b: ['apples', 'oranges'], c: ['foo', null], d: null, e: null }],
  ],
  [
    'JSON_TYPE',
    `select json_type('1') as a, json_type('"x"') as b, json_type('[1]') as c, json_type('{"a": 1}') as d, json_type('null') as e, json_type('true') as f`,
    [{ a: 'number', b: 'string', c: 'array', d: 'object', e: 'null', f: 'boolean' }],
  ],
  [
    'TO_JSON_STRING of a STRUCT, scalars, a TIMESTAMP, a DATE and NULL',
    `select to_json_string(struct(1 as id, [10,20] as coordinates)) as a, to_json_string('x"y') as b, to_json_string(1.5) as c,
            to_json_string(timestamp '2017-03-06 12:34:56.789012') as d, to_json_string(date '2017-03-06') as e, to_json_string(null) as f`,
    [{ a: '{"id":1,"coordinates":[10,20]}', b: '"x\\"y"', c: '1.5', d: '"2017-03-06T12:34:56.789012Z"', e: '"2017-03-06"', f: 'null' }],
  ],
  [
    'ARRAY_TO_STRING skips NULLs unless given a text for them',
    `select array_to_string(['coffee', 'tea', 'milk', null], '--', 'MISSING') as a, array_to_string(['cake', 'pie', null], '--') as b`,
    [{ a: 'coffee--tea--milk--MISSING', b: 'cake--pie' }],
  ],
  [
    'ARRAY_REVERSE, ARRAY_CONCAT (NULL when an array is NULL), ARRAY_FIRST, ARRAY_LAST',
    `select array_to_string(array_reverse(['a', 'b', 'c']), '') as a, array_length(array_reverse(array<int64>[])) as b,
            array_to_string(array_concat(['1', '2'], ['3', '4'], ['5', '6']), ',') as c, array_concat([1], if(1 > 2, [2], null)) is null as d,
            array_first(['a', 'b', 'c', 'd']) as e, array_last(['a', 'b', 'c', 'd']) as f`,
    [{ a: 'cba', b: 0, c: '1,2,3,4,5,6', d: true, e: 'a', f: 'd' }],
  ],
  [
    'ARRAY_INCLUDES',
    `select array_includes([1, 2, 3], 2) as a, array_includes([1, 2, 3], 4) as b, array_includes([1, null], cast(null as int64)) as c`,
    [{ a: true, b: false, c: null }],
  ],
  [
    'ARRAY_SLICE with positive and negative offsets',
    `select array_to_string(array_slice(['a', 'b', 'c', 'd', 'e'], 1, 3), '') as a, array_to_string(array_slice(['a', 'b', 'c', 'd', 'e'], -1, 3), '') as b,
            array_to_string(array_slice(['a', 'b', 'c', 'd', 'e'], -3, -1), '') as c, array_to_string(array_slice(['a', 'b', 'c', 'd', 'e'], 1, -3), '') as d,
            array_to_string(array_slice(['a', 'b', 'c', 'd', 'e'], 10, 12), '') as e`,
    [{ a: 'bcd', b: '', c: 'cde', d: 'bc', e: '' }],
  ],
  [
    'ARRAY_MAX / ARRAY_MIN / ARRAY_SUM / ARRAY_AVG skip NULLs',
    `select array_max([8, 37, null, 55, 4]) as a, array_min([8, 37, null, 4, 55]) as b, array_sum([1, 2, 3, 4, 5, null]) as c,
            array_avg([0, 2, null, 4, 4, 5]) as d, array_sum([1.5, 2.5]) as e, array_max(array<int64>[]) as f`,
    [{ a: 55, b: 4, c: 15, d: 3, e: 4, f: null }],
  ],
  [
    'ARRAY_IS_DISTINCT, ARRAY_INCLUDES_ALL, ARRAY_INCLUDES_ANY',
    `select array_is_distinct([1, 2, 3]) as a, array_is_distinct([1, 1, 1]) as b, array_is_distinct([1, 2, null]) as c, array_is_distinct([1, 1, null, null]) as d,
            array_includes_all([1, 2, 3, 4, 5], [3, 4, 5]) as e, array_includes_all([1, 2, 3, 4, 5], [4, 5, 6]) as f,
            array_includes_any([1, 2, 3], [3, 4, 5]) as g, array_includes_any([1, 2, 3], [4, 5, 6]) as h`,
    [{ a: true, b: false, c: true, d: false, e: true, f: false, g: true, h: false }],
  ],
  [
    'GENERATE_ARRAY: integers, steps, floats, empty ranges',
    `select array_to_string(array(select cast(x as string) from unnest(generate_array(1, 5)) as x), ',') as a,
            array_to_string(array(select cast(x as string) from unnest(generate_array(0, 10, 3)) as x), ',') as b,
            array_to_string(array(select cast(x as string) from unnest(generate_array(10, 0, -3)) as x), ',') as c,
            array_length(generate_array(4, 4, 10)) as d, array_length(generate_array(10, 0, 3)) as e,
            array_to_string(array(select cast(x as string) from unnest(generate_array(0, 1, 0.25)) as x), ',') as f`,
    [{ a: '1,2,3,4,5', b: '0,3,6,9', c: '10,7,4,1', d: 1, e: 0, f: '0,0.25,0.5,0.75,1' }],
  ],
  [
    'OFFSET / ORDINAL / SAFE_OFFSET / SAFE_ORDINAL',
    `select ['coffee', 'tea', 'milk'][offset(1)] as a, ['coffee', 'tea', 'milk'][ordinal(1)] as b, ['coffee', 'tea', 'milk'][safe_offset(3)] as c,
            ['coffee', 'tea', 'milk'][safe_ordinal(0)] as d`,
    [{ a: 'tea', b: 'coffee', c: null, d: null }],
  ],
  [
    'UNNEST … WITH OFFSET numbers elements from 0',
    `select x, off from unnest(['foo', 'bar', 'baz']) as x with offset as off order by off desc`,
    [
      { x: 'baz', off: 2 },
      { x: 'bar', off: 1 },
      { x: 'foo', off: 0 },
    ],
  ],
  ['UNNEST … WITH OFFSET names the column offset by default', `select sum(offset) as s from unnest([5, 6, 7]) with offset`, [{ s: 3 }]],
];

describe('library: JSON and arrays', () => {
  for (const [name, bq, rows] of cases) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when OFFSET is out of range, then the query fails as in BigQuery', async () => {
    await assertRejects(expectTranslation(`select [1, 2][offset(2)] as x`).toReturn([]), /out of bounds/);
    await assertRejects(expectTranslation(`select array_first(array<int64>[]) as x`).toReturn([]), /out of bounds/);
  });

  it('when a generated array would exceed 100,000 elements, then it is refused: literal bounds before running, others when run', async () => {
    await expectTranslation(`select generate_array(1, 1000000) as x`).toFail(SqlLimitError, /GENERATE_ARRAY would make more than 100000/);
    await expectTranslation(`select generate_date_array('0001-01-01', '9999-12-31') as x`).toFail(SqlLimitError, /more than 100000/);
    await assertRejects(expectTranslation(`select generate_array(1, 1000000 + 0) as x`).toReturn([]), /at most 100000 elements/);
    await assertRejects(expectTranslation(`select generate_array(1, 5, 0) as x`).toReturn([]), /step of a generated array cannot be 0/);
  });

  it('when an array function gets a scalar, then a 400 naming the argument', async () => {
    await expectTranslation(`select array_reverse('abc') as x`).toFail(SqlSyntaxError, /ARRAY_REVERSE needs an array/);
    await expectTranslation(`select generate_array('a', 'b') as x`).toFail(SqlSyntaxError, /GENERATE_ARRAY takes numbers/);
  });
});

async function assertRejects(p: Promise<unknown>, message: RegExp): Promise<void> {
  const { rejects } = await import('node:assert/strict');
  await rejects(p, message);
}
