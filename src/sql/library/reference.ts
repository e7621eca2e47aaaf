/**
 * BigQuery's function reference for the categories the translator answers (BigQuery's pages are
 * generated from GoogleSQL's documentation, the docs/ folder of google/zetasql: the `## NAME`
 * headings of string_functions.md, mathematical_functions.md, range-functions.md, …, keeping what
 * BigQuery lists; RANGE_BUCKET is a mathematical function there).
 * It is the measure of docs/COMPATIBILITY.md's coverage table (coverage.ts writes it): a function
 * listed here is supported when the function table (src/sql/functions.ts) has it, or when it is
 * syntax the parser reads (`syntax`).
 *
 * `outOfScope` says why a function means nothing over log data here; those are left out of the
 * share. `missing` says why a function that would mean something is not answered (yet).
 */

export interface ReferenceFunction {
  /** As BigQuery spells it: `NET.HOST`, `CASE expr`. */
  readonly name: string;
  readonly category: string;
  /** Read by the parser (CAST, CASE, EXTRACT, ARRAY(…)), not an entry of the function table. */
  readonly syntax?: boolean;
  /** Why it cannot mean anything over log data here (not counted). */
  readonly outOfScope?: string;
  /** Why it is not supported, though it would mean something. */
  readonly missing?: string;
}

type Notes = Readonly<Record<string, { syntax?: true; outOfScope?: string; missing?: string }>>;

const CATEGORIES: readonly [category: string, names: string, notes: Notes][] = [
  [
    'string',
    'ASCII BYTE_LENGTH CHAR_LENGTH CHARACTER_LENGTH CHR CODE_POINTS_TO_BYTES CODE_POINTS_TO_STRING COLLATE CONCAT CONTAINS_SUBSTR EDIT_DISTANCE ENDS_WITH FORMAT FROM_BASE32 FROM_BASE64 FROM_HEX INITCAP INSTR LEFT LENGTH LOWER LPAD LTRIM NORMALIZE NORMALIZE_AND_CASEFOLD OCTET_LENGTH REGEXP_CONTAINS REGEXP_EXTRACT REGEXP_EXTRACT_ALL REGEXP_INSTR REGEXP_REPLACE REGEXP_SUBSTR REPEAT REPLACE REVERSE RIGHT RPAD RTRIM SAFE_CONVERT_BYTES_TO_STRING SOUNDEX SPLIT STARTS_WITH STRPOS SUBSTR SUBSTRING TO_BASE32 TO_BASE64 TO_CODE_POINTS TO_HEX TRANSLATE TRIM UNICODE UPPER',
    {
      COLLATE: {
        outOfScope:
          'a collation specification for comparisons; Postgres collations are fixed per column and log text is compared byte-wise',
      },
    },
  ],
  [
    'mathematical',
    'ABS ACOS ACOSH ASIN ASINH ATAN ATAN2 ATANH CBRT CEIL CEILING COS COSH COSINE_DISTANCE COT COTH CSC CSCH DIV EXP EUCLIDEAN_DISTANCE FLOOR GREATEST IEEE_DIVIDE IS_INF IS_NAN LEAST LN LOG LOG10 MOD POW POWER RAND RANGE_BUCKET ROUND SAFE_ADD SAFE_DIVIDE SAFE_MULTIPLY SAFE_NEGATE SAFE_SUBTRACT SEC SECH SIGN SIN SINH SQRT TAN TANH TRUNC',
    {
      COSINE_DISTANCE: { outOfScope: 'a distance between embedding vectors (machine learning); log events carry none' },
      EUCLIDEAN_DISTANCE: { outOfScope: 'a distance between embedding vectors (machine learning); log events carry none' },
      RAND: {
        outOfScope:
          'a new value on every call: results are cached by query and parameters, and the rewrites may compute an expression once per query (the catalogue admits no volatile function)',
      },
    },
  ],
  [
    'conditional',
    'CASE_expr CASE COALESCE IF IFNULL NULLIF NULLIFZERO ZEROIFNULL',
    { CASE_expr: { syntax: true }, CASE: { syntax: true } },
  ],
  [
    'conversion',
    'CAST SAFE_CAST PARSE_NUMERIC PARSE_BIGNUMERIC',
    {
      CAST: { syntax: true },
      SAFE_CAST: { syntax: true },
    },
  ],
  ['hash', 'FARM_FINGERPRINT MD5 SHA1 SHA256 SHA512', {}],
  [
    'net',
    'NET.HOST NET.IP_FROM_STRING NET.IP_NET_MASK NET.IP_TO_STRING NET.IP_TRUNC NET.IPV4_FROM_INT64 NET.IPV4_TO_INT64 NET.PUBLIC_SUFFIX NET.REG_DOMAIN NET.SAFE_IP_FROM_STRING',
    {},
  ],
  ['bit', 'BIT_COUNT', {}],
  [
    'aggregate',
    'ANY_VALUE ARRAY_AGG ARRAY_CONCAT_AGG AVG BIT_AND BIT_OR BIT_XOR COUNT COUNTIF GROUPING LOGICAL_AND LOGICAL_OR MAX MAX_BY MIN MIN_BY STRING_AGG SUM',
    {
      GROUPING: { missing: 'means something only with GROUP BY ROLLUP / CUBE / GROUPING SETS, which the parser refuses (not written yet)' },
    },
  ],
  ['approximate aggregate', 'APPROX_COUNT_DISTINCT APPROX_QUANTILES APPROX_TOP_COUNT APPROX_TOP_SUM', {}],
  ['statistical aggregate', 'CORR COVAR_POP COVAR_SAMP STDDEV STDDEV_POP STDDEV_SAMP VAR_POP VAR_SAMP VARIANCE', {}],
  ['numbering', 'CUME_DIST DENSE_RANK NTILE PERCENT_RANK RANK ROW_NUMBER', {}],
  ['navigation', 'FIRST_VALUE LAG LAST_VALUE LEAD NTH_VALUE PERCENTILE_CONT PERCENTILE_DISC', {}],
  [
    'date',
    'CURRENT_DATE DATE DATE_ADD DATE_DIFF DATE_FROM_UNIX_DATE DATE_SUB DATE_TRUNC EXTRACT FORMAT_DATE LAST_DAY PARSE_DATE UNIX_DATE',
    { EXTRACT: { syntax: true } },
  ],
  ['datetime', 'CURRENT_DATETIME DATETIME DATETIME_ADD DATETIME_DIFF DATETIME_SUB DATETIME_TRUNC FORMAT_DATETIME PARSE_DATETIME', {}],
  ['time', 'CURRENT_TIME FORMAT_TIME PARSE_TIME TIME TIME_ADD TIME_DIFF TIME_SUB TIME_TRUNC', {}],
  [
    'timestamp',
    'CURRENT_TIMESTAMP FORMAT_TIMESTAMP PARSE_TIMESTAMP STRING TIMESTAMP TIMESTAMP_ADD TIMESTAMP_DIFF TIMESTAMP_MICROS TIMESTAMP_MILLIS TIMESTAMP_SECONDS TIMESTAMP_SUB TIMESTAMP_TRUNC UNIX_MICROS UNIX_MILLIS UNIX_SECONDS',
    {},
  ],
  ['interval', 'JUSTIFY_DAYS JUSTIFY_HOURS JUSTIFY_INTERVAL MAKE_INTERVAL', {}],
  [
    'JSON',
    'BOOL FLOAT64 INT64 JSON_ARRAY JSON_ARRAY_APPEND JSON_ARRAY_INSERT JSON_EXTRACT JSON_EXTRACT_ARRAY JSON_EXTRACT_SCALAR JSON_EXTRACT_STRING_ARRAY JSON_KEYS JSON_OBJECT JSON_QUERY JSON_QUERY_ARRAY JSON_REMOVE JSON_SET JSON_STRIP_NULLS JSON_TYPE JSON_VALUE JSON_VALUE_ARRAY LAX_BOOL LAX_FLOAT64 LAX_INT64 LAX_STRING PARSE_JSON TO_JSON TO_JSON_STRING',
    {},
  ],
  [
    'range',
    'GENERATE_RANGE_ARRAY RANGE RANGE_CONTAINS RANGE_END RANGE_INTERSECT RANGE_OVERLAPS RANGE_SESSIONIZE RANGE_START',
    {
      RANGE_SESSIONIZE: {
        missing:
          'a table-valued function (`FROM RANGE_SESSIONIZE(TABLE t, ...)`), and the parser reads no function in FROM but UNNEST; the same sessions come from window functions over RANGE_START / RANGE_END (not translated yet)',
      },
    },
  ],
  [
    'array',
    'ARRAY ARRAY_CONCAT ARRAY_FIRST ARRAY_LAST ARRAY_LENGTH ARRAY_REVERSE ARRAY_SLICE ARRAY_TO_STRING GENERATE_ARRAY GENERATE_DATE_ARRAY GENERATE_TIMESTAMP_ARRAY',
    { ARRAY: { syntax: true } },
  ],
];

export const REFERENCE: readonly ReferenceFunction[] = CATEGORIES.flatMap(([category, names, notes]) =>
  names.split(' ').map((key) => ({ name: key.replace('_expr', ' expr'), category, ...notes[key] })),
);
