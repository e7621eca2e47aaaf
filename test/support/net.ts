import type { Server } from 'node:http';
import net from 'node:net';

/** A TCP port free on 127.0.0.1 right now (for a child service, a proxy or a redis-server of a test). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `server` (an `http.createServer(app)` or `createHttpServer(app)`) on a free port of
 * 127.0.0.1 and resolves once it listens, with the port and the base URL to fetch from.
 */
export async function listenLocally(server: Server): Promise<{ port: number; base: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, base: `http://127.0.0.1:${port}` };
}
