/**
 * A real HTTP receiver on 127.0.0.1 for alert deliveries: it answers each request with the next
 * status of its script (then 200) and records what it was sent.
 *
 *   const r = await Receiver.start([500, 500]); // 500, 500, then 200
 *   ... r.url('/hook'), r.received, r.delivered (requests answered 2xx)
 */
import http from 'node:http';
import { listenLocally } from '../support/net.js';

/** A scripted answer: a status, a status with headers, or `'hang'` (read the request, never answer). */
export type Answer = number | { status: number; headers: Record<string, string> } | 'hang';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  status: number;
}

export class Receiver {
  readonly received: Received[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly base: string,
    private readonly script: Answer[],
  ) {}

  static async start(script: Answer[] = []): Promise<Receiver> {
    const server = http.createServer();
    const { base } = await listenLocally(server);
    const receiver = new Receiver(server, base, [...script]);
    server.on('request', (req, res) => receiver.answer(req, res));
    return receiver;
  }

  url(path = '/hook'): string {
    return this.base + path;
  }

  /** Requests answered 2xx. */
  get delivered(): Received[] {
    return this.received.filter((r) => r.status >= 200 && r.status < 300);
  }

  /** The next answers (then 200). */
  answerNext(...script: Answer[]): void {
    this.script.push(...script);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const next = this.script.shift() ?? 200;
      if (next === 'hang') {
        this.received.push({ path: req.url ?? '', headers: req.headers, body: parse(Buffer.concat(chunks).toString('utf8')), status: 0 });
        return;
      }
      const { status, headers } = typeof next === 'number' ? { status: next, headers: {} } : next;
      this.received.push({ path: req.url ?? '', headers: req.headers, body: parse(Buffer.concat(chunks).toString('utf8')), status });
      res.writeHead(status, headers).end(status < 300 ? 'ok' : 'no');
    });
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
