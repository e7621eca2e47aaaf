/**
 * `sources.hot_leaves`: the leaves of single records a source keeps as typed columns beside
 * `metadata` (src/storage/hotLeaves.ts), each with the partitions still to be backfilled:
 * `[{"path": "metadata.request.path", "type": "STRING", "pending_partitions": [...]}]`.
 * NULL means never configured: the service gives a default source its default hot leaves
 * (src/sources/defaults.ts) and backfills the partitions it already has.
 */
export const up = (pgm) => {
  pgm.addColumn('sources', { hot_leaves: { type: 'jsonb' } });
};

export const down = (pgm) => {
  pgm.dropColumn('sources', 'hot_leaves');
};
