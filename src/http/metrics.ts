// The Prometheus text of every instance a server serves: for GET /metrics behind the credential, and for the
// separate loopback listener of `--metrics-port` that a local Prometheus scrapes without one.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostAllowed, listen } from '../net/guards.js';
import { callOperation } from '../service/edge.js';
import type { InstanceRegistry } from './instances.js';

/** The address the `--metrics-port` listener binds: this machine only. */
const METRICS_BIND = '127.0.0.1';

/** The Prometheus text of the registry's instances (those that open; one that fails is left out). */
export async function servedMetrics(
  registry: InstanceRegistry,
): Promise<{ text: string; contentType: string }> {
  const { prometheusMetrics, METRICS_CONTENT_TYPE } = await import('../metrics/prometheus.js');
  const instances = [];
  for (const i of await registry.list()) {
    if (i.error !== undefined) continue;
    instances.push({ name: i.instance, inst: await registry.open(i.instance) });
  }
  return { text: await prometheusMetrics(instances), contentType: METRICS_CONTENT_TYPE };
}

/**
 * A listener on 127.0.0.1:`port` that answers only `GET /metrics` (404 otherwise), without a credential: only
 * this machine reaches it. A request whose Host is not this machine's is refused (403) as on the main port,
 * so a page that rebinds its own name to 127.0.0.1 cannot read it. Answers its URL and a close.
 */
export async function listenMetrics(
  registry: InstanceRegistry,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (!hostAllowed(req.headers.host, METRICS_BIND)) {
      res
        .writeHead(403, { 'content-type': 'text/plain; charset=utf-8' })
        .end('this Host is not served here\n');
      return;
    }
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics here\n');
      return;
    }
    servedMetrics(registry).then(
      (m) => res.writeHead(200, { 'content-type': m.contentType }).end(m.text),
      (err: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`${(err as Error).message}\n`),
    );
  });
  await listen(server, 'serve: metrics', METRICS_BIND, port);
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${METRICS_BIND}:${addr.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Verifies every served instance now and again every `everyMs` after the last round ended (rounds never
 * overlap), so the metrics' `agentstate_verify_*` gauges report a recent check. An instance that fails to
 * open or verify is skipped this round. `stop` waits for a round in progress.
 */
export function verifyEvery(registry: InstanceRegistry, everyMs: number): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();
  const run = async () => {
    for (const i of await registry.list().catch(() => [])) {
      if (stopped) return;
      if (i.error !== undefined) continue;
      await registry
        .open(i.instance)
        .then((inst) => callOperation(inst, 'verify', {}))
        .catch(() => {});
    }
  };
  const next = () => {
    if (stopped) return;
    round = run().finally(() => {
      if (!stopped) timer = setTimeout(next, everyMs).unref();
    });
  };
  next();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
    },
  };
}
