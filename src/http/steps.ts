/**
 * The steps of the request pipeline (src/http/pipeline.ts); app.ts lists them in order.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Exchange, PipelineStep } from './pipeline.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/**
 * An incoming id is echoed when it is short and printable without quoting (a UUID, a trace id,
 * a load balancer's id), so a caller can follow its own id through our logs; anything else
 * (empty, long, or with characters that could forge log lines or headers) is replaced.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** `X-Request-Id`: the caller's when sane, else a new UUID; on the answer and in the log lines. */
export function requestIdStep(): PipelineStep {
  return {
    name: 'request id',
    run(exchange: Exchange) {
      const incoming = exchange.req.headers['x-request-id'];
      const id = typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      exchange.id = id;
      exchange.res.setHeader(REQUEST_ID_HEADER, id);
    },
  };
}

/**
 * Counts and times every request once, when its answer is sent, under its route (the fast path's
 * label, else the route Express matched, else `unmatched`), and writes the debug request log.
 */
export function requestMetricsStep(metrics: Pick<Metrics, 'httpRequests' | 'httpDuration'>, logger: Logger): PipelineStep {
  const { httpRequests, httpDuration } = metrics;
  return {
    name: 'metrics and request log',
    run(exchange: Exchange) {
      const { req, res } = exchange;
      res.once('finish', () => {
        const route = exchange.route ?? (req as { route?: { path?: string } }).route?.path ?? 'unmatched';
        const status = res.statusCode;
        httpRequests.inc({ route, status: String(status) });
        httpDuration.observe({ route }, (performance.now() - exchange.started) / 1000);
        // The path without the query string: it may hold the api_key (src/auth/urlKey.ts).
        if (logger.isLevelEnabled('debug')) {
          logger.debug({ id: exchange.id, method: req.method, path: pathOf(req.url), route, status }, 'request');
        }
      });
    },
  };
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
