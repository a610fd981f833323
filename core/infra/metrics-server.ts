/**
 * A bare node:http listener that serves only `GET /metrics`: the worker's (it has no HTTP server of its own), and the
 * API's when METRICS_PORT puts its metrics on a port apart from the public one. METRICS_TOKEN, when set, is required
 * here too; a refusal is the contract's error shape A.
 */
import http from 'node:http';
import { metricsAuthorized, type Metrics } from './metrics.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

function sendError(res: http.ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ success: false, error: { code, message } }));
}

export async function startMetricsServer(metrics: Metrics, opts: { port: number; host: string; token?: string }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return sendError(res, 404, 'NOT_FOUND', 'Only /metrics is served here');
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, 405, 'METHOD_NOT_ALLOWED', 'Use GET');
    if (!metricsAuthorized(opts.token, req.headers.authorization)) {
      return sendError(res, 401, 'UNAUTHORIZED', 'The metrics token is required (Authorization: Bearer <METRICS_TOKEN>)');
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => sendError(res, 500, 'INTERNAL', 'Metrics could not be collected'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
