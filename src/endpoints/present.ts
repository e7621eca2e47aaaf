/**
 * An endpoint as the management API answers it: our fields, and the original service's names
 * for the same things (docs/COMPATIBILITY.md, "Management API"), so clients of either read it.
 */
import type { EndpointRecord } from './repository.js';

export function presentEndpoint<T extends EndpointRecord>(endpoint: T) {
  return {
    ...endpoint,
    token: endpoint.id,
    max_limit: endpoint.max_rows,
    proactive_requerying_seconds: endpoint.cache_warming_seconds ?? 0,
    enable_dynamic_reservation: false,
    backend_id: null,
  };
}
