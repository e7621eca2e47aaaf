import type { createClient } from 'redis';

/** The client the limiters share: the type `createClient` returns with the service's options (no modules, RESP 2). */
export type RedisClient = ReturnType<typeof createClient>;
