/**
 * An authenticating HTTP proxy for engines that run without security in the harness (Elasticsearch:
 * its security lives in the x-pack modules, which are not on Maven Central). It answers 401 to any
 * request whose Authorization header is not one of the accepted values, and pipes the rest to the
 * engine unchanged, so a connector that forgets its credentials fails the tests.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AuthProxy {
  /** http://127.0.0.1:P */
  url: string;
  close(): Promise<void>;
}

/** Listens on a free port of the engine's host (127.0.0.1) and forwards authenticated requests to `target` (http://host:port). */
export async function startAuthProxy(target: string, acceptedAuthorizations: readonly string[], realm: string): Promise<AuthProxy> {
  const upstream = new URL(target);
  const accepted = new Set(acceptedAuthorizations);
  const server = http.createServer((req, res) => {
    if (!accepted.has(req.headers.authorization ?? '')) {
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Basic realm="${realm}"` });
      res.end(JSON.stringify({ error: { type: 'security_exception', reason: 'missing or wrong credentials' }, status: 401 }));
      return;
    }
    const forward = http.request(
      // A connection per request: a kept-alive one that the engine has closed meanwhile would hang up.
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, connection: 'close' }, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.on('aborted', () => forward.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, upstream.hostname, resolve);
  });
  // The proxy lives in the process that started the engines (Jest's global setup); it must not keep it alive.
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${upstream.hostname}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
