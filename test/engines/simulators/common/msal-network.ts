/**
 * An MSAL `INetworkModule` over node:https with the simulators' CA, for tests that drive the
 * simulators with @azure/msal-node directly. MSAL's default client is the global fetch, which trusts
 * a private CA only through NODE_EXTRA_CA_CERTS read at process start — too late inside a jest worker.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';

export interface SimpleNetworkResponse<T> {
  headers: Record<string, string>;
  body: T;
  status: number;
}

export interface SimpleNetworkModule {
  sendGetRequestAsync<T>(url: string, options?: { headers?: Record<string, string>; body?: string }, timeout?: number): Promise<SimpleNetworkResponse<T>>;
  sendPostRequestAsync<T>(url: string, options?: { headers?: Record<string, string>; body?: string }): Promise<SimpleNetworkResponse<T>>;
}

export function caNetworkModule(caFile: string): SimpleNetworkModule {
  const agent = new https.Agent({ ca: fs.readFileSync(caFile), keepAlive: true });
  const send = <T>(method: string, url: string, options: { headers?: Record<string, string>; body?: string } = {}, timeout?: number) =>
    new Promise<SimpleNetworkResponse<T>>((resolve, reject) => {
      const req = https.request(url, { method, agent, headers: options.headers, timeout }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // MSAL reports non-JSON bodies itself
          }
          resolve({ headers, body: body as T, status: res.statusCode ?? 0 });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`timeout after ${timeout} ms`)));
      req.on('error', reject);
      req.end(options.body);
    });
  return {
    sendGetRequestAsync: (url, options, timeout) => send('GET', url, options, timeout),
    sendPostRequestAsync: (url, options) => send('POST', url, options),
  };
}
