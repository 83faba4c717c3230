import * as http from 'node:http';
import * as https from 'node:https';
import {
  NotFoundError,
  UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type GatewayError,
} from '@gateway/connector-api';

export interface SolrClientOptions {
  /** Base URL, e.g. http://host:8983/solr (no trailing slash, no credentials). */
  url: string;
  user?: string;
  password?: string;
  timeoutMs: number;
}

/**
 * A thin client over Solr's JSON request API. Solr has no maintained Node
 * client (solr-client and solr-node are unmaintained), and all the gateway
 * needs is JSON over HTTP: one keep-alive agent, a per-call time-out, and
 * Solr's errors mapped to the gateway's typed errors. Credentials go in the
 * Authorization header only, never in a URL or a message.
 */
export class SolrClient {
  private readonly base: URL;
  private readonly agent: http.Agent;
  private readonly authorization?: string;

  constructor(private readonly options: SolrClientOptions) {
    this.base = new URL(options.url.endsWith('/') ? options.url : `${options.url}/`);
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent;
    // noDelay: a request is one write; Nagle would hold it back waiting for the previous answer's ACK.
    this.agent = new Agent({ keepAlive: true, maxSockets: 64, noDelay: true });
    if (options.user !== undefined) {
      this.authorization = 'Basic ' + Buffer.from(`${options.user}:${options.password ?? ''}`, 'utf8').toString('base64');
    }
  }

  /** POSTs a JSON request to <collection>/<handler> and answers Solr's JSON. */
  postJson(collection: string, handler: string, body: unknown): Promise<Record<string, unknown>> {
    return this.call('POST', `${encodeURIComponent(collection)}/${handler}`, collection, JSON.stringify(body));
  }

  get(path: string, collection?: string): Promise<Record<string, unknown>> {
    return this.call('GET', path, collection);
  }

  close(): void {
    this.agent.destroy();
  }

  private call(method: string, relative: string, collection: string | undefined, body?: string): Promise<Record<string, unknown>> {
    const url = new URL(relative, this.base);
    const transport = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (this.authorization) headers.authorization = this.authorization;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: GatewayError) => {
        if (settled) return;
        settled = true;
        reject(error);
      };
      const request = transport.request(url, { method, headers, agent: this.agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (e) => fail(new UpstreamUnavailableError(`Solr connection failed: ${e.message}`)));
        response.on('end', () => {
          if (settled) return;
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              settled = true;
              resolve(JSON.parse(text) as Record<string, unknown>);
            } catch {
              reject(new UpstreamError('Solr answered something that is not JSON'));
            }
            return;
          }
          fail(solrFailure(status, text, collection));
        });
      });
      request.setTimeout(this.options.timeoutMs, () => {
        fail(new UpstreamTimeoutError(`Solr did not answer within ${this.options.timeoutMs} ms`));
        request.destroy();
      });
      request.on('error', (e: NodeJS.ErrnoException) => {
        fail(new UpstreamUnavailableError(`Solr at ${this.base.origin} cannot be reached (${e.code ?? e.message})`));
      });
      request.end(body);
    });
  }
}

function solrFailure(status: number, text: string, collection: string | undefined): GatewayError {
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: { msg?: string } };
    message = parsed.error?.msg;
  } catch {
    // Jetty answers unknown cores with an HTML page
  }
  if (status === 404 && collection !== undefined) return new NotFoundError('collection', collection);
  if (status === 401 || status === 403) return new UpstreamError(`Solr refused the connection's credentials (HTTP ${status})`);
  if (status === 503) return new UpstreamUnavailableError(`Solr is unavailable${message ? `: ${message}` : ''}`);
  return new UpstreamError(`Solr: ${message ?? `HTTP ${status}`}`, { engineStatus: status });
}
