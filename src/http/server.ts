import http from 'node:http';
import type { Express } from 'express';

/**
 * Node refuses request heads over 16 KB with a bare 431, but CONTRACT.md allows a sandboxed
 * `sql` of up to 100 KB in the query string of a GET (up to three times that once URL-encoded).
 * The head limit is raised to fit it; bodies keep their own limits (1 MB, 10 MB for ingest).
 */
export const MAX_HEADER_BYTES = 512 * 1024;

export function createHttpServer(app: Express): http.Server {
  return http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, app);
}
