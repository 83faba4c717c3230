/**
 * Toxiproxy (Shopify), built from the Go module proxy (`go install github.com/Shopify/toxiproxy/v2/cmd/server@<pinned>`,
 * under a minute; cached afterwards). It sits between the gateway and an engine as a TCP proxy whose faults
 * ("toxics": latency, bandwidth, reset_peer, timeout, limit_data) and outages (proxy disabled) a test switches
 * through its HTTP API. The engine itself stays up, so a fault is removed without restarting anything.
 *
 *   const tp = toxiproxyClient(getEngine('toxiproxy'));
 *   const proxy = await tp.createProxy('cmis', `127.0.0.1:${cmis.port}`);   // proxy.listen: host:port to use
 *   await proxy.addToxic({ type: 'latency', attributes: { latency: 2000 } });
 *   await proxy.disable();  // outage: open connections are cut, new ones refused
 *   await proxy.reset();    // no toxics, enabled
 */
import {
  HOST,
  freePort,
  goInstall,
  httpRequest,
  launchProcess,
  waitUntilReady,
  withPortRetry,
  type EngineInfoBase,
  type Run,
  type Started,
} from './engines';

/** Pinned: the newest v2 release the Go module proxy lists (`go list -m -versions`, 2026-11-23). */
export const TOXIPROXY_VERSION = 'v2.5.0';

export interface ToxiproxyInfo extends EngineInfoBase {
  name: 'toxiproxy';
  /** The control API: http://127.0.0.1:P */
  apiUrl: string;
}

export function buildToxiproxy(log: (line: string) => void): Promise<string> {
  return goInstall('toxiproxy', `github.com/Shopify/toxiproxy/v2/cmd/server@${TOXIPROXY_VERSION}`, 'server', 'toxiproxy-server', `toxiproxy-${TOXIPROXY_VERSION}`, log);
}

export async function startToxiproxy(binary: string, dir: string, run: Run): Promise<Started<'toxiproxy'>> {
  return withPortRetry('toxiproxy', async (port) => {
    const proc = launchProcess('toxiproxy', dir, run, {
      command: binary,
      args: ['-host', HOST, '-port', String(port)],
      cwd: dir,
      env: { ...process.env, LOG_LEVEL: 'warn' },
      stopSignal: 'SIGTERM',
      watchdog: true,
    });
    const apiUrl = `http://${HOST}:${port}`;
    await waitUntilReady('toxiproxy', proc, async () => (await httpRequest(`${apiUrl}/version`)).status === 200);
    const info: ToxiproxyInfo = { name: 'toxiproxy', host: HOST, port, pid: proc.pid, dir, logFile: proc.logFile, apiUrl };
    return { info, proc };
  });
}

// ---------------------------------------------------------------------------------------------
// Control API (https://github.com/Shopify/toxiproxy#http-api)

export type ToxicType = 'latency' | 'bandwidth' | 'slow_close' | 'timeout' | 'reset_peer' | 'slicer' | 'limit_data';

export interface Toxic {
  type: ToxicType;
  /** Unique per proxy; default `<type>_<stream>`. */
  name?: string;
  /** downstream = engine → gateway (default), upstream = gateway → engine. */
  stream?: 'upstream' | 'downstream';
  toxicity?: number;
  /**
   * latency: {latency, jitter} ms; bandwidth: {rate} KB/s; timeout: {timeout} ms (0 = hold the data forever, a
   * black hole); reset_peer: {timeout} ms before the TCP RST; limit_data: {bytes} then the connection closes.
   */
  attributes: Record<string, number>;
}

async function call(apiUrl: string, method: string, route: string, body?: unknown): Promise<unknown> {
  const answer = await httpRequest(`${apiUrl}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (answer.status >= 300) throw new Error(`toxiproxy ${method} ${route}: ${answer.status} ${answer.text()}`);
  return answer.body.length > 0 ? answer.json() : undefined;
}

export interface ToxiProxy {
  name: string;
  /** 127.0.0.1:P: where the gateway connects instead of the engine. */
  listen: string;
  host: string;
  port: number;
  addToxic(toxic: Toxic): Promise<string>;
  removeToxic(name: string): Promise<void>;
  /** Outage: toxiproxy closes the listener and every open connection. */
  disable(): Promise<void>;
  enable(): Promise<void>;
  /** Every toxic removed, proxy enabled. */
  reset(): Promise<void>;
  delete(): Promise<void>;
}

export interface ToxiproxyClient {
  createProxy(name: string, upstream: string): Promise<ToxiProxy>;
}

export function toxiproxyClient(info: Pick<ToxiproxyInfo, 'apiUrl'>): ToxiproxyClient {
  const { apiUrl } = info;
  return {
    async createProxy(name, upstream) {
      await call(apiUrl, 'DELETE', `/proxies/${name}`).catch(() => undefined);
      // A port picked here rather than ":0", so that the proxy keeps its address across disable/enable.
      const port = await freePort();
      await call(apiUrl, 'POST', '/proxies', { name, listen: `${HOST}:${port}`, upstream, enabled: true });
      const toxics = new Set<string>();
      const proxy: ToxiProxy = {
        name,
        listen: `${HOST}:${port}`,
        host: HOST,
        port,
        async addToxic(toxic) {
          const stream = toxic.stream ?? 'downstream';
          const toxicName = toxic.name ?? `${toxic.type}_${stream}`;
          await call(apiUrl, 'POST', `/proxies/${name}/toxics`, { name: toxicName, type: toxic.type, stream, toxicity: toxic.toxicity ?? 1, attributes: toxic.attributes });
          toxics.add(toxicName);
          return toxicName;
        },
        async removeToxic(toxicName) {
          await call(apiUrl, 'DELETE', `/proxies/${name}/toxics/${toxicName}`);
          toxics.delete(toxicName);
        },
        disable: async () => void (await call(apiUrl, 'POST', `/proxies/${name}`, { enabled: false })),
        enable: async () => void (await call(apiUrl, 'POST', `/proxies/${name}`, { enabled: true })),
        async reset() {
          for (const toxicName of [...toxics]) await proxy.removeToxic(toxicName);
          await proxy.enable();
        },
        delete: async () => void (await call(apiUrl, 'DELETE', `/proxies/${name}`)),
      };
      return proxy;
    },
  };
}
