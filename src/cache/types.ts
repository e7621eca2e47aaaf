/**
 * The seam between running endpoints and the result cache (src/cache/).
 *
 * The query service builds the key and says how to compute the body; the cache decides HIT or
 * MISS, runs `compute` once across replicas on a miss (single flight), stores the encoded body,
 * and re-runs live keys in the background through the `WarmRunner` given to `startWarming`.
 */
export interface WarmSpec {
  endpointId: string;
  version: number;
  /** Declared parameter values only (undeclared ones never reach the cache). */
  params: Record<string, string>;
  sql?: string;
  /** The caller's LQL over the endpoint's CTEs (src/lql/), when `sql` is not given. */
  lql?: string;
  redact: boolean;
}

export interface CacheRequest {
  /** `ep:<endpoint id>:<version>:<hash of params, sql, redaction>` */
  key: string;
  ttlSeconds: number;
  /** Re-run period; null when the endpoint has no warming. */
  warmPeriodSeconds: number | null;
  spec: WarmSpec;
}

export interface CacheOutcome {
  /** The encoded JSON response body, byte-identical on every hit. */
  body: string;
  status: 'HIT' | 'MISS';
}

/** Computes the body of a spec again; rejects when the endpoint is gone or changed (its version differs). */
export type WarmRunner = (spec: WarmSpec) => Promise<string>;

export interface ResultCache {
  fetch(request: CacheRequest, compute: () => Promise<string>): Promise<CacheOutcome>;
  /** 'none' when no shared cache is configured (in-process cache), else whether Redis answers. */
  ready(): Promise<boolean | 'none'>;
  startWarming(run: WarmRunner): void;
  close(): Promise<void>;
}
