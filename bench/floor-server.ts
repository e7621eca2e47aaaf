/**
 * Floor of the cache-hit scenario: a minimal Express 5 app that answers every GET with one Redis
 * GET of a given key (the service's cached body for the same request) and sends those bytes as
 * the service does (200, application/json). No auth, no routing beyond one path, no metrics.
 * `/floor?key=K` serves another key: the HTTP floor of the uncached queries (the same body as the
 * service's answer, so the time of carrying that body over HTTP).
 *
 *   REDIS_URL=redis://127.0.0.1:6379 KEY=lq:ep:… PORT=4100 npx tsx bench/floor-server.ts
 */
import express from 'express';
import { createClient } from 'redis';

const key = process.env.KEY!;
const redis = createClient({ url: process.env.REDIS_URL });
await redis.connect();
const app = express();
app.disable('x-powered-by');
app.set('etag', false); // as the service (src/app.ts)
app.get('/floor', async (req, res) => {
  const body = await redis.get(typeof req.query.key === 'string' ? req.query.key : key);
  if (body === null) {
    res.status(404).end();
    return;
  }
  res.status(200).type('application/json; charset=utf-8').send(body);
});
app.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\n'));
