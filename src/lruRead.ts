/**
 * perf: the options object passed to every lru-cache read on a hot path. Without one, lru-cache
 * makes an empty object per call (its default parameter). It writes the call's `status` into it,
 * which stays undefined as long as nothing subscribes to lru-cache's diagnostics channel.
 */
export const LRU_READ = {};
