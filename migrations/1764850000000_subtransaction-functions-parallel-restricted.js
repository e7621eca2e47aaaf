/**
 * The functions of the `logs` schema written in PL/pgSQL with an EXCEPTION block
 * (`logs.bq_json`, the BigQuery library's safe conversions, …) start a subtransaction on each
 * call, which Postgres refuses inside a parallel worker: "cannot start subtransactions during a
 * parallel operation" (25000). They were declared PARALLEL SAFE, so a query whose plan went
 * parallel failed whole: on lq_bench_1m and lq_bench_10m, Studio's Auth report (`json_value` over
 * `event_message`, bench/studio.ts) failed every time the planner chose a parallel scan.
 * PARALLEL RESTRICTED keeps them out of the workers (they run in the leader) while the rest of a
 * plan may still be parallel. Found by the catalog, so every such function is covered, whichever
 * migration made it; a function created later with an EXCEPTION block must say RESTRICTED itself.
 */
const FUNCTIONS = `
  SELECT p.oid::regprocedure AS sig
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
   WHERE n.nspname = 'logs' AND l.lanname = 'plpgsql' AND p.prosrc ~* '\\mexception\\M'`;

export const up = (pgm) => {
  pgm.sql(`DO $$ DECLARE f record; BEGIN
    FOR f IN ${FUNCTIONS} AND p.proparallel = 's' LOOP
      EXECUTE format('ALTER FUNCTION %s PARALLEL RESTRICTED', f.sig);
    END LOOP; END $$`);
};

export const down = (pgm) => {
  pgm.sql(`DO $$ DECLARE f record; BEGIN
    FOR f IN ${FUNCTIONS} AND p.proparallel = 'r' LOOP
      EXECUTE format('ALTER FUNCTION %s PARALLEL SAFE', f.sig);
    END LOOP; END $$`);
};
