/**
 * BigQuery's JSON type and its functions, each row one of the documented examples (GoogleSQL's
 * reference, from which BigQuery's is generated: the google/zetasql repository,
 * json_functions.md; JSON_KEYS from BigQuery's own page), run on Postgres. A JSON value comes
 * back as its compact text with keys sorted, as BigQuery's API sends it; a JSON null is the text
 * `null`, an SQL NULL is null.
 */
import { rejects } from 'node:assert/strict';
import { SqlSyntaxError } from '../../src/sql/errors.js';
import { JSON_TYPE_EXAMPLES } from '../support/libraryExamples.js';
import { expectTranslation } from '../support/translation.js';

describe('library: the JSON type', () => {
  for (const [name, bq, rows] of JSON_TYPE_EXAMPLES) {
    it(`when ${name}, then the documented result`, async () => {
      await expectTranslation(bq).toReturn(rows);
    });
  }

  it('when BigQuery raises an error for a JSON value, then the query fails', async () => {
    for (const [bq, message] of [
      [`select bool(json '123') as x`, /not a boolean/],
      [`select bool(json 'null') as x`, /not a boolean/],
      [`select int64(json '10.1') as x`, /not a number of the INT64 domain/],
      [`select int64(json '"strawberry"') as x`, /not a number of the INT64 domain/],
      [`select float64(json '"strawberry"') as x`, /not a number/],
      [`select float64(json '18446744073709551615', wide_number_mode=>'exact') as x`, /not a number FLOAT64 holds exactly/],
      [`select string(json '123') as x`, /not a string/],
      [`select parse_json('{"id": 922337203685477580701}') as x`, /without loss of precision/],
      [`select parse_json('{"id": 922337203685477580701}', wide_number_mode=>'exact') as x`, /without loss of precision/],
      [`select parse_json('{"a": ') as x`, /invalid input syntax for type json/],
      [`select json_object(cast(null as string), 1) as x`, /key/],
      [`select json_object(['a', 'b'], [10]) as x`, /number of keys and values must match/],
      [`select json_object(if(false, ['a'], null), [10, 20]) as x`, /cannot be NULL/],
    ] as const) {
      await rejects(expectTranslation(bq).toReturn([]), message, bq);
    }
  });

  it('when a JSON function gets what BigQuery refuses while compiling, then a 400 naming it', async () => {
    await expectTranslation(`select json '{"a": ' as x`).toFail(SqlSyntaxError, /invalid JSON literal/);
    await expectTranslation(`select json_object('a', 1, 'b') as x`).toFail(SqlSyntaxError, /pairs of a key and a value/);
    await expectTranslation(`select json_remove(json '{}', '$') as x`).toFail(SqlSyntaxError, /cannot remove the path '\$'/);
    await expectTranslation(`select json_set(json '{}', '$.a', 1, '$.b') as x`).toFail(SqlSyntaxError, /pairs of a path and a value/);
    await expectTranslation(`select json_set('{}', '$.a', 1) as x`).toFail(SqlSyntaxError, /JSON_SET takes JSON as argument 1, not STRING/);
    await expectTranslation(`select lax_int64(10) as x`).toFail(SqlSyntaxError, /LAX_INT64 takes JSON as argument 1, not INT64/);
    await expectTranslation(`select float64(json '123.4', wide_number_mode=>'EXACT') as x`).toFail(
      SqlSyntaxError,
      /wide_number_mode must be one of 'exact', 'round'/,
    );
    await expectTranslation(`select json_keys(json '{}', mode => 'loose') as x`).toFail(SqlSyntaxError, /mode must be one of/);
    await expectTranslation(`select json_set(json '{}', '$.a', 1, create_if_missing => 'no') as x`).toFail(
      SqlSyntaxError,
      /create_if_missing takes a BOOL/,
    );
    await expectTranslation(`select json_set(json '{}', '$.a', 1, create => true) as x`).toFail(SqlSyntaxError, /no argument named create/);
    await expectTranslation(`select json '{"a": 1}' = json '{"a": 1}' as x`).toFail(SqlSyntaxError, /no operator = for JSON and JSON/);
  });
});
