/**
 * The query-time budget per API key (docs/API.md, "Rate limits"): milliseconds of database query
 * time gained per second and held at most. NULL means the service's configured default
 * (QUERY_TIME_PER_SECOND_MS, QUERY_TIME_BURST_MS); 0 means no budget for that key.
 */
export const up = (pgm) => {
  pgm.sql(`
    ALTER TABLE api_keys
      ADD COLUMN query_ms_per_second integer CHECK (query_ms_per_second >= 0),
      ADD COLUMN query_ms_burst integer CHECK (query_ms_burst >= 0)`);
};

export const down = (pgm) => {
  pgm.sql('ALTER TABLE api_keys DROP COLUMN query_ms_per_second, DROP COLUMN query_ms_burst');
};
