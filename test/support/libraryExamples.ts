/**
 * BigQuery's documented examples of the TIME and JSON types' functions, with their documented
 * answers (GoogleSQL's reference, from which BigQuery's is generated: the google/zetasql
 * repository, time_functions.md, timestamp_functions.md and json_functions.md;
 * JSON_KEYS from BigQuery's own page). test/sql/library-time.test.ts and library-json-type.test.ts
 * run them on Postgres, test/sql/library-pglite.test.ts on PGlite (the embedded database).
 *
 * TIME values come back as Postgres prints them, `15:30:00`; a JSON value as its compact text with
 * keys sorted, as BigQuery's API sends it (a JSON null is the text `null`, an SQL NULL is null).
 */

export type Example = [name: string, bq: string, rows: Record<string, unknown>[]];

export const TIME_EXAMPLES: Example[] = [
  [
    'TIME literals, CAST to and from STRING, and comparison',
    `select time '15:30:00' as a, cast('07:05:09.250' as time) as b, cast(time '15:30:00' as string) as c,
            time '15:30:00' > time '09:00:00' as d, time '15:30:00' = '15:30:00' as e, safe_cast('25:00:00' as time) as f,
            cast(datetime '2008-12-25 15:30:00' as time) as g, cast(timestamp '2008-12-25 15:30:00+08' as time) as h`,
    [{ a: '15:30:00', b: '07:05:09.25', c: '15:30:00', d: true, e: true, f: null, g: '15:30:00', h: '07:30:00' }],
  ],
  [
    'EXTRACT from a TIME',
    `select extract(hour from time "15:30:00") as hour, extract(minute from time '15:30:00') as m,
            extract(second from time '15:30:07.25') as s, extract(millisecond from time '15:30:07.25') as ms`,
    [{ hour: 15, m: 30, s: 7, ms: 250 }],
  ],
  [
    'TIME(hour, minute, second), TIME(timestamp, zone), TIME(datetime)',
    `select time(15, 30, 00) as time_hms, time(timestamp "2008-12-25 15:30:00+08", "America/Los_Angeles") as time_tstz,
            time(datetime "2008-12-25 15:30:00.000000") as time_dt, time(timestamp "2008-12-25 15:30:00+08") as time_utc`,
    [{ time_hms: '15:30:00', time_tstz: '23:30:00', time_dt: '15:30:00', time_utc: '07:30:00' }],
  ],
  [
    'TIME_ADD / TIME_SUB, wrapping around midnight',
    `select time "15:30:00" as original_time, time_add(time "15:30:00", interval 10 minute) as later,
            time_sub(time "15:30:00", interval 10 minute) as earlier, time_add(time '23:30:00', interval 1 hour) as wrapped,
            time_sub(time '00:30:00', interval 1 hour) as back, time_add(time '10:00:00', interval 50 hour) as days`,
    [{ original_time: '15:30:00', later: '15:40:00', earlier: '15:20:00', wrapped: '00:30:00', back: '23:30:00', days: '12:00:00' }],
  ],
  [
    'TIME_DIFF counts part boundaries; TIME_TRUNC',
    `select time_diff(time "15:30:00", time "14:35:00", minute) as difference, time_diff(time '14:35:00', time '15:30:00', minute) as negative,
            time_diff(time '15:00:00', time '14:59:59', hour) as hours, time_trunc(time "15:30:00", hour) as truncated,
            time_trunc(time '15:30:07.123456', millisecond) as ms`,
    [{ difference: 55, negative: -55, hours: 1, truncated: '15:00:00', ms: '15:30:07.123' }],
  ],
  [
    'FORMAT_TIME and PARSE_TIME',
    `select format_time("%R", time "15:30:00") as formatted_time, format_time('%H:%M:%S', time '07:05:09') as hms,
            parse_time("%H", "15") as parsed_time, parse_time('%I:%M:%S %p', '2:23:38 pm') as pm, parse_time('%T', '07:30:00') as t`,
    [{ formatted_time: '15:30', hms: '07:05:09', parsed_time: '15:00:00', pm: '14:23:38', t: '07:30:00' }],
  ],
  [
    'STRING of a TIMESTAMP, in UTC or a zone',
    `select string(timestamp "2008-12-25 15:30:00+00", "UTC") as string, string(timestamp '2008-12-25 15:30:00+00') as utc,
            string(timestamp '2008-12-25 15:30:00+00', 'America/Los_Angeles') as la, string(timestamp '2008-12-25 15:30:00.25+00', 'Asia/Kolkata') as kolkata`,
    [
      {
        string: '2008-12-25 15:30:00+00',
        utc: '2008-12-25 15:30:00+00',
        la: '2008-12-25 07:30:00-08',
        kolkata: '2008-12-25 21:00:00.25+05:30',
      },
    ],
  ],
];

export const JSON_TYPE_EXAMPLES: Example[] = [
  [
    'JSON literals and PARSE_JSON: compact, keys sorted, numbers as BigQuery holds them',
    `select parse_json('{"coordinates": [10, 20], "id": 1}') as json_data, parse_json('6') as six, parse_json('"red"') as red,
            json '{"b": 1.0, "a": [true, null]}' as lit, parse_json('{"id": 922337203685477580701}', wide_number_mode=>'round') as rounded,
            parse_json(cast(null as string)) as sql_null, json 'null' as json_null`,
    [
      {
        json_data: '{"coordinates":[10,20],"id":1}',
        six: '6',
        red: '"red"',
        lit: '{"a":[true,null],"b":1}',
        rounded: '{"id":9.223372036854776e+20}',
        sql_null: null,
        json_null: 'null',
      },
    ],
  ],
  [
    'TO_JSON of rows, scalars and wide numbers',
    `with CoordinatesTable as ((select 1 as id, [10, 20] as coordinates) union all (select 2 as id, [30, 40] as coordinates))
     select to_json(t) as json_objects, to_json(9007199254740993, stringify_wide_numbers=>true) as stringify_on,
            to_json(9007199254740993) as stringify_off, to_json(struct(9007199254740993 as id), stringify_wide_numbers=>true) as nested,
            to_json(cast(null as int64)) as n
     from CoordinatesTable as t order by t.id`,
    [
      {
        json_objects: '{"coordinates":[10,20],"id":1}',
        stringify_on: '"9007199254740993"',
        stringify_off: '9007199254740993',
        nested: '{"id":"9007199254740993"}',
        n: 'null',
      },
      {
        json_objects: '{"coordinates":[30,40],"id":2}',
        stringify_on: '"9007199254740993"',
        stringify_off: '9007199254740993',
        nested: '{"id":"9007199254740993"}',
        n: 'null',
      },
    ],
  ],
  [
    'BOOL, INT64, FLOAT64 and STRING of JSON, and their SAFE. forms',
    `select bool(json 'true') as vacancy, bool(json_query(json '{"hotel class": "5-star", "vacancy": true}', "$.vacancy")) as v2,
            int64(json '2005') as flight_number, int64(json_query(json '{"gate": "A4", "flight_number": 2005}', "$.flight_number")) as f2,
            int64(json '10.0') as score, float64(json '9.8') as velocity, float64(json_query(json '{"vo2_max": 39.1, "age": 18}', "$.vo2_max")) as vo2_max,
            float64(json '18446744073709551615', wide_number_mode=>'round') as rounded, string(json '"purple"') as color,
            string(json_query(json '{"name": "sky", "color": "blue"}', "$.color")) as c2,
            safe.bool(json '123') as sb, safe.int64(json '"strawberry"') as si, safe.float64(json '"strawberry"') as sf, safe.string(json '123') as ss`,
    [
      {
        vacancy: true,
        v2: true,
        flight_number: 2005,
        f2: 2005,
        score: 10,
        velocity: 9.8,
        vo2_max: 39.1,
        rounded: 18446744073709552000,
        color: 'purple',
        c2: 'blue',
        sb: null,
        si: null,
        sf: null,
        ss: null,
      },
    ],
  ],
  [
    'LAX_BOOL',
    `select lax_bool(json 'true') as a, lax_bool(json '"true"') as b, lax_bool(json '"true "') as c, lax_bool(json '"foo"') as d,
            lax_bool(json '10') as e, lax_bool(json '0') as f, lax_bool(json '0.0') as g, lax_bool(json '-1.1') as h`,
    [{ a: true, b: true, c: null, d: null, e: true, f: false, g: false, h: true }],
  ],
  [
    'LAX_INT64 rounds half away from zero, NULL out of range',
    `select lax_int64(json '10') as a, lax_int64(json '10.0') as b, lax_int64(json '1.1') as c, lax_int64(json '3.5') as d,
            lax_int64(json '1.1e2') as e, lax_int64(json '1e100') as f, lax_int64(json 'true') as g, lax_int64(json 'false') as h,
            lax_int64(json '"10"') as i, lax_int64(json '"1.1"') as j, lax_int64(json '"1.1e2"') as k, lax_int64(json '"+1.5"') as l,
            lax_int64(json '"1e100"') as m, lax_int64(json '"foo"') as n`,
    [{ a: 10, b: 10, c: 1, d: 4, e: 110, f: null, g: 1, h: 0, i: 10, j: 1, k: 110, l: 2, m: null, n: null }],
  ],
  [
    'LAX_FLOAT64',
    `select lax_float64(json '9.8') as a, lax_float64(json '9') as b, lax_float64(json '9007199254740993') as c, lax_float64(json '1e100') as d,
            lax_float64(json 'true') as e, lax_float64(json '"10"') as f, lax_float64(json '"1.1"') as g, lax_float64(json '"1.1e2"') as h,
            lax_float64(json '"+1.5"') as i, cast(lax_float64(json '"NaN"') as string) as j, cast(lax_float64(json '"Inf"') as string) as k,
            cast(lax_float64(json '"-InfiNiTY"') as string) as l, lax_float64(json '"foo"') as m`,
    [
      {
        a: 9.8,
        b: 9,
        c: 9007199254740992,
        d: 1e100,
        e: null,
        f: 10,
        g: 1.1,
        h: 110,
        i: 1.5,
        j: 'NaN',
        k: 'Infinity',
        l: '-Infinity',
        m: null,
      },
    ],
  ],
  [
    'LAX_STRING',
    `select lax_string(json '"purple"') as a, lax_string(json '"10"') as b, lax_string(json 'true') as c, lax_string(json 'false') as d,
            lax_string(json '10.0') as e, lax_string(json '10') as f, lax_string(json '1e100') as g, lax_string(json 'null') as h`,
    [{ a: 'purple', b: '10', c: 'true', d: 'false', e: '10', f: '10', g: '1e+100', h: null }],
  ],
  [
    'JSON_ARRAY',
    `select json_array(10) as a, json_array([]) as b, json_array(10, 'foo', null) as c, json_array(struct(10 as a, 'foo' as b)) as d,
            json_array(10, ['foo', 'bar'], [20, 30]) as e, json_array(10, [json '20', json '"foo"']) as f, json_array() as g`,
    [
      {
        a: '[10]',
        b: '[[]]',
        c: '[10,"foo",null]',
        d: '[{"a":10,"b":"foo"}]',
        e: '[10,["foo","bar"],[20,30]]',
        f: '[10,[20,"foo"]]',
        g: '[]',
      },
    ],
  ],
  [
    'JSON_OBJECT of pairs: the first of equal keys wins',
    `select json_object() as a, json_object('foo', 10, 'bar', true) as b, json_object('foo', 10, 'bar', ['a', 'b']) as c,
            json_object('a', null, 'b', json 'null') as d, json_object('a', 10, 'a', 'foo') as e`,
    [{ a: '{}', b: '{"bar":true,"foo":10}', c: '{"bar":["a","b"],"foo":10}', d: '{"a":null,"b":null}', e: '{"a":10}' }],
  ],
  [
    'JSON_OBJECT of a key array and a value array',
    `select json_object(array<string>[], []) as a, json_object(['a', 'b'], [10, null]) as b, json_object(['a', 'b'], [json '10', json '"foo"']) as c,
            json_object(['a', 'b'], [struct(10 as id, 'Red' as color), struct(20 as id, 'Blue' as color)]) as d,
            json_object(['a', 'b'], [to_json(10), to_json(['foo', 'bar'])]) as e`,
    [
      {
        a: '{}',
        b: '{"a":10,"b":null}',
        c: '{"a":10,"b":"foo"}',
        d: '{"a":{"color":"Red","id":10},"b":{"color":"Blue","id":20}}',
        e: '{"a":10,"b":["foo","bar"]}',
      },
    ],
  ],
  [
    'JSON_OBJECT over ARRAY_AGG of groups',
    `with Fruits as (select 0 as id, 'color' as json_key, 'red' as json_value union all select 0, 'fruit', 'apple'
                     union all select 1, 'fruit', 'banana' union all select 1, 'ripe', 'true')
     select json_object(array_agg(json_key order by json_key), array_agg(json_value order by json_key)) as json_data from Fruits group by id order by id`,
    [{ json_data: '{"color":"red","fruit":"apple"}' }, { json_data: '{"fruit":"banana","ripe":"true"}' }],
  ],
  [
    'JSON_SET replaces, creates paths, pads arrays, ignores what does not fit',
    `select json_set(json '{"a": 1}', '$', json '{"b": 2, "c": 3}') as a, json_set(json '{"a": 1}', "$.b", 999, create_if_missing => false) as b,
            json_set(json '{"a": 1}', "$.a", 999, create_if_missing => false) as c, json_set(json '{"a": {}}', '$.a.b', 100) as d,
            json_set(json 'null', '$.a.b', 100) as e, json_set(json '{"a": 1}', '$.b', 2, '$.a.c', 100, '$.d', 3) as f,
            json_set(json '{"a": 1}', '$.a[2]', 100, '$.b', 2) as g, json_set(json '["a", ["b", "c"], "d"]', '$[1]', "foo") as h,
            json_set(json '["a", ["b", "c"], "d"]', '$[1][0]', "foo") as i, json_set(json 'null', '$[0][3]', "foo") as j,
            json_set(json '["a", ["b", "c"], "d"]', '$[1][4]', "foo") as k, json_set(json '["a", ["b", "c"], "d"]', '$[1][0][0]', "foo") as l,
            json_set(json '["a", ["b", "c"], "d"]', '$[1][2][1]', "foo") as m, json_set(json '{}', '$.b[2].d', 100) as n,
            json_set(json '{"a": 1, "b": {"c":3}, "d": [4]}', '$.a', 'v1', '$.b.e', 'v2', '$.d[2]', 'v3') as o`,
    [
      {
        a: '{"b":2,"c":3}',
        b: '{"a":1}',
        c: '{"a":999}',
        d: '{"a":{"b":100}}',
        e: '{"a":{"b":100}}',
        f: '{"a":1,"b":2,"d":3}',
        g: '{"a":1,"b":2}',
        h: '["a","foo","d"]',
        i: '["a",["foo","c"],"d"]',
        j: '[[null,null,null,"foo"]]',
        k: '["a",["b","c",null,null,"foo"],"d"]',
        l: '["a",["b","c"],"d"]',
        m: '["a",["b","c",[null,"foo"]],"d"]',
        n: '{"b":[null,null,{"d":100}]}',
        o: '{"a":"v1","b":{"c":3,"e":"v2"},"d":[4,null,"v3"]}',
      },
    ],
  ],
  [
    'JSON_REMOVE',
    `select json_remove(json '["a", ["b", "c"], "d"]', '$[1]') as a, json_remove(json '["a", ["b", "c"], "d"]', '$[1]', '$[1]') as b,
            json_remove(json '["a", ["b", "c"], "d"]', '$[1]', '$[1]', '$[0]') as c, json_remove(json '{"a": {"b": {"c": "d"}}}', '$.a.b.c') as d,
            json_remove(json '{"a": {"b": {"c": "d"}}}', '$.a.b') as e, json_remove(json '{"a": 1}', '$.b') as f,
            json_remove(json '{"a": [1, 2, 3]}', '$.a[0]', '$.a.b', '$.b', '$.a[0]') as g, json_remove(json 'null', '$.a.b') as h`,
    [{ a: '["a","d"]', b: '["a"]', c: '[]', d: '{"a":{"b":{}}}', e: '{"a":{}}', f: '{"a":1}', g: '{"a":[3]}', h: 'null' }],
  ],
  [
    'JSON_ARRAY_APPEND',
    `select json_array_append(json '["a", "b", "c"]', '$', 1) as a, json_array_append(json '["a", "b", "c"]', '$', [1, 2]) as b,
            json_array_append(json '["a", "b", "c"]', '$', [1, 2], append_each_element=>false) as c,
            json_array_append(json '["a", ["b"], "c"]', '$[1]', [1, 2], '$[1][1]', [3, 4], append_each_element=>false) as d,
            json_array_append(json '["a", ["b"], "c"]', '$[1]', [1, 2], '$[1][1]', [3, 4]) as e, json_array_append(json '{"a": [1]}', '$.a', 2) as f,
            json_array_append(json '{"a": null}', '$.a', 10) as g, json_array_append(json '{"a": 1}', '$.a', 2) as h, json_array_append(json '{"a": 1}', '$.b', 2) as i`,
    [
      {
        a: '["a","b","c",1]',
        b: '["a","b","c",1,2]',
        c: '["a","b","c",[1,2]]',
        d: '["a",["b",[1,2,[3,4]]],"c"]',
        e: '["a",["b",1,2],"c"]',
        f: '{"a":[1,2]}',
        g: '{"a":[10]}',
        h: '{"a":1}',
        i: '{"a":1}',
      },
    ],
  ],
  [
    'JSON_ARRAY_INSERT',
    `select json_array_insert(json '["a", ["b", "c"], "d"]', '$[1]', 1) as a, json_array_insert(json '["a", ["b", "c"], "d"]', '$[1][0]', 1) as b,
            json_array_insert(json '["a", "b", "c"]', '$[1]', [1, 2]) as c, json_array_insert(json '["a", "b", "c"]', '$[1]', [1, 2], insert_each_element=>false) as d,
            json_array_insert(json '["a", "b", "c", "d"]', '$[7]', "e") as e, json_array_insert(json '{"a": {}}', '$.a[0]', 2) as f,
            json_array_insert(json '[1, 2]', '$', 3) as g, json_array_insert(json '{"a": null}', '$.a[2]', 10) as h, json_array_insert(json '1', '$[0]', 'r1') as i`,
    [
      {
        a: '["a",1,["b","c"],"d"]',
        b: '["a",[1,"b","c"],"d"]',
        c: '["a",1,2,"b","c"]',
        d: '["a",[1,2],"b","c"]',
        e: '["a","b","c","d",null,null,null,"e"]',
        f: '{"a":{}}',
        g: '[1,2]',
        h: '{"a":[null,null,10]}',
        i: '1',
      },
    ],
  ],
  [
    'JSON_STRIP_NULLS',
    `select json_strip_nulls(json '{"a": null, "b": "c"}') as a, json_strip_nulls(json '[1, null, 2, null]') as b,
            json_strip_nulls(json '[1, null, 2, null]', include_arrays=>false) as c, json_strip_nulls(json '[1, null, 2, null, [null]]') as d,
            json_strip_nulls(json '[1, null, 2, null, [null]]', remove_empty=>true) as e, json_strip_nulls(json '{"a": null}', remove_empty=>true) as f,
            json_strip_nulls(json '{"a": [null]}', remove_empty=>true) as g,
            json_strip_nulls(json '{"a": {"b": {"c": null}}, "d": [null], "e": [], "f": 1}', include_arrays=>false, remove_empty=>true) as h,
            json_strip_nulls(json '{"a": {"b": {"c": null}}, "d": [null], "e": [], "f": 1}', remove_empty=>true) as i, json_strip_nulls(json 'null') as j,
            json_strip_nulls(json '{"a": {"b": null}, "c": null}', '$.a') as k`,
    [
      {
        a: '{"b":"c"}',
        b: '[1,2]',
        c: '[1,null,2,null]',
        d: '[1,2,[]]',
        e: '[1,2]',
        f: 'null',
        g: 'null',
        h: '{"d":[null],"e":[],"f":1}',
        i: '{"f":1}',
        j: 'null',
        k: '{"a":{},"c":null}',
      },
    ],
  ],
  [
    'JSON_KEYS: unique dotted keys, sorted; max_depth and mode',
    `select json_keys(json '{"a": {"b": 1}}') as a, json_keys(json '{"a": {"b": 1}}', 1) as b, json_keys(json '{"a": [{"b": 1}, {"c": 2}]}', mode => "lax") as c,
            json_keys(json '{"a": [[{"b": 1}, {"c": 2}]]}', mode => "lax") as d, json_keys(json '{"a": [[{"b": 1}, {"c": 2}]]}', mode => "lax recursive") as e,
            json_keys(json '{"a": [{"b": 1}]}') as f, json_keys(json '{"userId": 1, "username": 2, "country": 3}') as g`,
    [
      {
        a: ['a', 'a.b'],
        b: ['a'],
        c: ['a', 'a.b', 'a.c'],
        d: ['a'],
        e: ['a', 'a.b', 'a.c'],
        f: ['a'],
        g: ['country', 'userId', 'username'],
      },
    ],
  ],
  [
    'JSON_QUERY / JSON_VALUE / JSON_TYPE / TO_JSON_STRING of a JSON value',
    `select json_query(json '{"class": {"students": [{"name": "Jane"}]}}', '$.class') as a, json_query(json '{"a": null}', '$.a') as b,
            json_query(json '{"a": null}', '$.b') as c, json_value(json '{"name": "Jakob", "age": "6"}', '$.age') as d,
            json_type(json '{"a": 1}') as e, to_json_string(json '{"b": 1, "a": 2}') as f`,
    [{ a: '{"students":[{"name":"Jane"}]}', b: 'null', c: null, d: '6', e: 'object', f: '{"a":2,"b":1}' }],
  ],
];

/**
 * BigQuery's RANGE type: the documented examples of its range functions (range-functions.md),
 * range literals (lexical.md, "Range literals") and CAST AS RANGE (conversion_functions.md),
 * times restated in UTC. A RANGE comes back as the service answers it (src/query/encode.ts):
 * BigQuery's `[start, end)` string with `UNBOUNDED`, each bound as its type is answered
 * (DATETIME `2022-10-01T16:00:00`, TIMESTAMP unix microseconds); CAST(… AS STRING) is
 * BigQuery's text (`[2022-10-01 21:53:27+00, 2022-10-01 23:00:00+00)`).
 */
export const RANGE_EXAMPLES: Example[] = [
  [
    'RANGE of dates, datetimes and timestamps, unbounded below or above',
    `select range(date '2022-12-01', date '2022-12-31') as a, range(datetime '2022-10-01 14:53:27', datetime '2022-10-01 16:00:00') as b,
            range(timestamp '2022-10-01 14:53:27 America/Los_Angeles', timestamp '2022-10-01 16:00:00 America/Los_Angeles') as c,
            cast(range(timestamp '2022-10-01 14:53:27 America/Los_Angeles', timestamp '2022-10-01 16:00:00 America/Los_Angeles') as string) as d,
            range(null, date '2022-12-31') as e, range(date '2022-10-01', null) as f`,
    [
      {
        a: '[2022-12-01, 2022-12-31)',
        b: '[2022-10-01T14:53:27, 2022-10-01T16:00:00)',
        c: '[1664661207000000, 1664665200000000)',
        d: '[2022-10-01 21:53:27+00, 2022-10-01 23:00:00+00)',
        e: '[UNBOUNDED, 2022-12-31)',
        f: '[2022-10-01, UNBOUNDED)',
      },
    ],
  ],
  [
    'range literals, with UNBOUNDED or NULL bounds',
    `select range<date> '[2020-01-01, 2020-12-31)' as a, range<datetime> '[2020-01-01 12:00:00, 2020-12-31 12:00:00)' as b,
            cast(range<timestamp> '[2020-10-01 12:00:00+08, 2020-12-31 12:00:00+08)' as string) as c,
            range<date> '[UNBOUNDED, 2020-12-31)' as d, range<date> '[NULL, 2020-12-31)' as e, range<date> '[2020-01-01, UNBOUNDED)' as f,
            range<date> '[2020-01-01, NULL)' as g, range<date> '[UNBOUNDED, UNBOUNDED)' as h, range<date> '[NULL, NULL)' as i`,
    [
      {
        a: '[2020-01-01, 2020-12-31)',
        b: '[2020-01-01T12:00:00, 2020-12-31T12:00:00)',
        c: '[2020-10-01 04:00:00+00, 2020-12-31 04:00:00+00)',
        d: '[UNBOUNDED, 2020-12-31)',
        e: '[UNBOUNDED, 2020-12-31)',
        f: '[2020-01-01, UNBOUNDED)',
        g: '[2020-01-01, UNBOUNDED)',
        h: '[UNBOUNDED, UNBOUNDED)',
        i: '[UNBOUNDED, UNBOUNDED)',
      },
    ],
  ],
  [
    'CAST of a STRING to a RANGE, and of a RANGE to a STRING',
    `select cast('[2020-01-01, 2020-01-02)' as range<date>) as a, cast('[2014-09-27 12:30:00.45, 2016-10-17 11:15:00.33)' as range<datetime>) as b,
            cast(cast('[2014-09-27 12:30:00+08, 2016-10-17 11:15:00+08)' as range<timestamp>) as string) as c,
            cast('[UNBOUNDED, 2020-01-02)' as range<date>) as d, cast('[2020-01-01, NULL)' as range<date>) as e,
            cast(range<date> '[2020-01-01, UNBOUNDED)' as string) as f, cast(range<datetime> '[2014-09-27 12:30:00.45, UNBOUNDED)' as string) as g`,
    [
      {
        a: '[2020-01-01, 2020-01-02)',
        b: '[2014-09-27T12:30:00.45, 2016-10-17T11:15:00.33)',
        c: '[2014-09-27 04:30:00+00, 2016-10-17 03:15:00+00)',
        d: '[UNBOUNDED, 2020-01-02)',
        e: '[2020-01-01, UNBOUNDED)',
        f: '[2020-01-01, UNBOUNDED)',
        g: '[2014-09-27 12:30:00.45, UNBOUNDED)',
      },
    ],
  ],
  [
    'CAST of text the query reads, and SAFE_CAST of text that is no range',
    `select cast(s as range<date>) as r, safe_cast(s as range<date>) as safe, cast(t as range<timestamp>) as ts
     from unnest([struct(1 as o, '[2020-01-01, 2020-01-02)' as s, '[2020-01-01 12:00:00, 2020-01-02)' as t),
                  struct(2, '[UNBOUNDED, 2020-01-02)', '[NULL, 2020-01-01 00:00:00+00)')]) order by o`,
    [
      { r: '[2020-01-01, 2020-01-02)', safe: '[2020-01-01, 2020-01-02)', ts: '[1577880000000000, 1577923200000000)' },
      { r: '[UNBOUNDED, 2020-01-02)', safe: '[UNBOUNDED, 2020-01-02)', ts: '[UNBOUNDED, 1577836800000000)' },
    ],
  ],
  [
    'RANGE_START and RANGE_END, NULL when unbounded',
    `select range_start(range<date> '[2022-12-01, 2022-12-31)') as a, range_start(range<date> '[UNBOUNDED, 2022-12-31)') as b,
            range_end(range<date> '[2022-12-01, 2022-12-31)') as c, range_end(range<date> '[2022-12-01, UNBOUNDED)') as d,
            range_start(range<timestamp> '[2020-10-01 12:00:00+08, UNBOUNDED)') as e, range_end(cast(null as range<date>)) as f`,
    [{ a: '2022-12-01', b: null, c: '2022-12-31', d: null, e: '2020-10-01T04:00:00.000Z', f: null }],
  ],
  [
    'RANGE_CONTAINS: a range in a range, and a value in a range',
    `select range_contains(range<date> '[2022-01-01, 2023-01-01)', range<date> '[2022-04-01, 2022-07-01)') as a,
            range_contains(range<date> '[2022-01-01, 2023-01-01)', range<date> '[2023-01-01, 2023-04-01)') as b,
            range_contains(range<date> '[2022-01-01, 2023-01-01)', date '2022-04-01') as c,
            range_contains(range<date> '[2022-01-01, 2023-01-01)', date '2023-04-01') as d,
            range_contains(range<date> '[2022-01-01, 2023-01-01)', date '2023-01-01') as e,
            range_contains(range<date> '[2022-01-01, UNBOUNDED)', date '9999-12-31') as f`,
    [{ a: true, b: false, c: true, d: false, e: false, f: true }],
  ],
  [
    'RANGE_OVERLAPS',
    `select range_overlaps(range<date> '[2022-02-01, 2022-09-01)', range<date> '[2021-06-15, 2022-04-15)') as a,
            range_overlaps(range<date> '[2020-02-01, 2020-09-01)', range<date> '[2021-06-15, 2022-04-15)') as b,
            range_overlaps(range<date> '[2022-02-01, UNBOUNDED)', range<date> '[2021-06-15, UNBOUNDED)') as c,
            range_overlaps(range<date> '[2022-01-01, 2022-02-01)', range<date> '[2022-02-01, 2022-03-01)') as d`,
    [{ a: true, b: false, c: true, d: false }],
  ],
  [
    'RANGE_INTERSECT, and SAFE.RANGE_INTERSECT of ranges that do not overlap',
    `select range_intersect(range<date> '[2022-02-01, 2022-09-01)', range<date> '[2021-06-15, 2022-04-15)') as a,
            range_intersect(range<date> '[2022-02-01, UNBOUNDED)', range<date> '[2021-06-15, 2022-04-15)') as b,
            range_intersect(range<date> '[2022-02-01, UNBOUNDED)', range<date> '[2021-06-15, UNBOUNDED)') as c,
            safe.range_intersect(range<date> '[2020-02-01, 2020-09-01)', range<date> '[2021-06-15, 2022-04-15)') as d`,
    [{ a: '[2022-02-01, 2022-04-15)', b: '[2022-02-01, 2022-04-15)', c: '[2022-02-01, UNBOUNDED)', d: null }],
  ],
  [
    'GENERATE_RANGE_ARRAY with and without the last partial range',
    `select generate_range_array(range(date '2020-01-01', date '2020-01-06'), interval 1 day) as a,
            generate_range_array(range(date '2020-01-01', date '2020-01-06'), interval 2 day) as b,
            generate_range_array(range(date '2020-01-01', date '2020-01-06'), interval 2 day, true) as c,
            generate_range_array(range(date '2020-01-01', date '2020-01-06'), interval 2 day, false) as d`,
    [
      {
        a: [
          '[2020-01-01, 2020-01-02)',
          '[2020-01-02, 2020-01-03)',
          '[2020-01-03, 2020-01-04)',
          '[2020-01-04, 2020-01-05)',
          '[2020-01-05, 2020-01-06)',
        ],
        b: ['[2020-01-01, 2020-01-03)', '[2020-01-03, 2020-01-05)', '[2020-01-05, 2020-01-06)'],
        c: ['[2020-01-01, 2020-01-03)', '[2020-01-03, 2020-01-05)', '[2020-01-05, 2020-01-06)'],
        d: ['[2020-01-01, 2020-01-03)', '[2020-01-03, 2020-01-05)'],
      },
    ],
  ],
  [
    'GENERATE_RANGE_ARRAY of timestamps and datetimes, unnested',
    `select cast(r as string) as r from unnest(generate_range_array(range<timestamp> '[2020-01-01 00:00:00, 2020-01-01 10:00:00)', interval 4 hour)) as r
     union all select cast(r as string) from unnest(generate_range_array(range<datetime> '[2020-01-31 00:00:00, 2020-04-15 00:00:00)', interval 1 month, false)) as r
     order by r`,
    [
      { r: '[2020-01-01 00:00:00+00, 2020-01-01 04:00:00+00)' },
      { r: '[2020-01-01 04:00:00+00, 2020-01-01 08:00:00+00)' },
      { r: '[2020-01-01 08:00:00+00, 2020-01-01 10:00:00+00)' },
      { r: '[2020-01-31 00:00:00, 2020-02-29 00:00:00)' },
      { r: '[2020-02-29 00:00:00, 2020-03-31 00:00:00)' },
    ],
  ],
  [
    'ranges compare by lower bound, then upper bound; unbounded lower first, unbounded upper last',
    `select range<date> '[2020-01-01, 2020-02-01)' < range<date> '[2020-01-02, 2020-01-03)' as a,
            range<date> '[UNBOUNDED, 2030-01-01)' < range<date> '[2020-01-01, 2020-01-02)' as b,
            range<date> '[2020-01-01, UNBOUNDED)' > range<date> '[2020-01-01, 9999-12-31)' as c,
            range(date '2020-01-01', date '2020-02-01') = range<date> '[2020-01-01, 2020-02-01)' as d,
            range<date> '[2020-01-01, 2020-02-01)' = '[2020-01-01, 2020-02-01)' as e,
            range<date> '[UNBOUNDED, UNBOUNDED)' = range<date> '[NULL, NULL)' as f`,
    [{ a: true, b: true, c: true, d: true, e: true, f: true }],
  ],
  [
    'ranges in GROUP BY, ORDER BY and ARRAY_AGG',
    `select r, count(*) as n from unnest([range<date> '[2020-01-01, 2020-02-01)', range<date> '[UNBOUNDED, 2020-01-05)',
                                          range<date> '[2020-01-01, 2020-02-01)', range<date> '[2020-01-01, UNBOUNDED)']) as r
     group by r order by r`,
    [
      { r: '[UNBOUNDED, 2020-01-05)', n: 1 },
      { r: '[2020-01-01, 2020-02-01)', n: 2 },
      { r: '[2020-01-01, UNBOUNDED)', n: 1 },
    ],
  ],
  [
    'MIN and MAX of ranges, ARRAY_AGG of ranges, and a range in a STRUCT',
    `select min(r) as lo, max(r) as hi, array_agg(r ignore nulls order by r desc) as rs,
            any_value(struct(range<date> '[2020-01-01, 2020-02-01)' as f)).f = range<date> '[2020-01-01, 2020-02-01)' as s
     from unnest([range<date> '[2020-01-01, 2020-02-01)', range<date> '[UNBOUNDED, 2020-01-05)', null, range<date> '[2020-01-01, UNBOUNDED)']) as r`,
    [
      {
        lo: '[UNBOUNDED, 2020-01-05)',
        hi: '[2020-01-01, UNBOUNDED)',
        rs: ['[2020-01-01, UNBOUNDED)', '[2020-01-01, 2020-02-01)', '[UNBOUNDED, 2020-01-05)'],
        s: true,
      },
    ],
  ],
];
