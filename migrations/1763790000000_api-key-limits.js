/**
 * Limits per API key (docs/API.md, "Rate limits"): NULL means the service's configured default
 * (RATE_LIMIT_PER_SECOND, RATE_LIMIT_BURST, MAX_CONCURRENT_QUERIES); 0 means no limit for that key.
 */
export const up = (pgm) => {
  pgm.sql(`
    ALTER TABLE api_keys
      ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second >= 0),
      ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst >= 0),
      ADD COLUMN max_concurrent_queries integer CHECK (max_concurrent_queries >= 0)`);
};

export const down = (pgm) => {
  pgm.sql('ALTER TABLE api_keys DROP COLUMN rate_limit_per_second, DROP COLUMN rate_limit_burst, DROP COLUMN max_concurrent_queries');
};
