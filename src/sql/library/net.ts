/**
 * BigQuery's NET functions (its reference, "Net functions"), called with their dotted names
 * (`NET.HOST(url)`). NET.HOST is logs.bq_net_host of
 * migrations/1764100002000_bigquery-net-conversion-functions.js.
 */
import type { FunctionDef } from '../functions.js';
import { TOTAL_STRICT } from '../postgres/facts.js';
import { STRING } from '../types.js';
import { def, defWith, fn, stringArg } from './define.js';

export const NET_FUNCTIONS: Readonly<Record<string, FunctionDef>> = {
  'net.host': defWith(
    def(1, 1, { 'logs.bq_net_host': TOTAL_STRICT }, (s) => fn('logs.bq_net_host', [stringArg(s, 0)], STRING)),
    { safe: 'same' },
  ),
};
