/** Keyword lists of the BigQuery dialect, as the parser needs them. */

/** BigQuery's reserved words: they cannot be unquoted identifiers or implicit aliases. */
export const RESERVED = new Set(
  (
    'ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST COLLATE CONTAINS CREATE CROSS CUBE ' +
    'CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE EXCEPT EXCLUDE EXISTS EXTRACT FALSE FETCH FOLLOWING FOR FROM FULL GROUP ' +
    'GROUPING GROUPS HASH HAVING IF IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL LEFT LIKE LIMIT LOOKUP MERGE NATURAL NEW NO ' +
    'NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING PROTO QUALIFY RANGE RECURSIVE RESPECT RIGHT ROLLUP ROWS SELECT SET ' +
    'SOME STRUCT TABLESAMPLE THEN TO TREAT TRUE UNBOUNDED UNION UNNEST USING WHEN WHERE WINDOW WITH WITHIN'
  ).split(' '),
);

/** Statements other than SELECT, named in the error so the caller knows what was refused. */
export const OTHER_STATEMENTS = new Set([
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'CREATE',
  'DROP',
  'ALTER',
  'TRUNCATE',
  'GRANT',
  'REVOKE',
  'CALL',
  'DECLARE',
  'SET',
  'BEGIN',
  'COMMIT',
  'ROLLBACK',
  'EXECUTE',
  'EXPORT',
  'LOAD',
  'COPY',
  'ASSERT',
  'VACUUM',
  'ANALYZE',
  'EXPLAIN',
]);

/** Words that start a clause BigQuery has but this translator refuses, with the name to report. */
export const UNSUPPORTED_CLAUSES: Readonly<Record<string, string>> = {
  WINDOW: 'WINDOW',
  PIVOT: 'PIVOT',
  UNPIVOT: 'UNPIVOT',
  TABLESAMPLE: 'TABLESAMPLE',
  INTERSECT: 'INTERSECT',
  EXCEPT: 'EXCEPT (set operation)',
  FOR: 'FOR (locking / time travel)',
  INTO: 'SELECT INTO',
};
