import * as http from 'node:http';
import * as https from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { abortError } from './native';

export interface TikaOptions {
  /** Tika Server's base URL, e.g. http://127.0.0.1:9998 (the /tika endpoint is added). */
  url: string;
  /** Whole exchange (upload, parsing, answer); past it the request is abandoned. */
  timeoutMs: number;
  /** PEM of the CA that signed an https Tika's certificate. */
  ca?: Buffer;
}

export type TikaOutcome = { ok: true; text: string; truncated: boolean } | { ok: false; warning: string };

/**
 * Tika Server's `PUT /tika` with `Accept: text/plain`, on node:http rather than fetch: the document is
 * piped with backpressure (fetch's duplex upload would need a web stream adapter and cannot give the
 * upload's own errors apart from Tika's), and the answer is read only up to maxChars.
 */
export class TikaClient {
  private readonly endpoint: URL;
  private readonly agent: http.Agent;

  constructor(private readonly options: TikaOptions) {
    const base = options.url.endsWith('/') ? options.url : `${options.url}/`;
    this.endpoint = new URL('tika', base);
    this.agent =
      this.endpoint.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ca: options.ca })
        : new http.Agent({ keepAlive: true });
  }

  get url(): string {
    return this.endpoint.href;
  }

  /**
   * Resolves with the text or with why there is none; rejects only when `content` fails or `signal`
   * aborts. On a Tika failure the rest of `content` is not read: it is destroyed, releasing its source.
   */
  extract(content: Readable, meta: { name: string; mimeType?: string; size?: number }, maxChars: number, signal?: AbortSignal): Promise<TikaOutcome> {
    signal?.throwIfAborted();
    return new Promise<TikaOutcome>((resolve, reject) => {
      let settled = false;
      let contentFailed: Error | undefined;
      const headers: http.OutgoingHttpHeaders = {
        Accept: 'text/plain',
        // Tika takes the resource name as a detection hint from here; only ASCII survives every parser.
        'Content-Disposition': `attachment; filename="${asciiName(meta.name)}"`,
      };
      if (meta.mimeType) headers['Content-Type'] = meta.mimeType;
      if (meta.size !== undefined && Number.isSafeInteger(meta.size) && meta.size >= 0) headers['Content-Length'] = meta.size;

      const request = (this.endpoint.protocol === 'https:' ? https : http).request(this.endpoint, { method: 'PUT', headers, agent: this.agent });

      const finish = (outcome: TikaOutcome | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) {
          request.destroy();
          content.destroy();
          reject(outcome);
          return;
        }
        if (!outcome.ok || outcome.truncated) {
          // Nothing more is wanted from either side.
          request.destroy();
          if (!content.readableEnded) content.destroy();
        }
        resolve(outcome);
      };
      const fail = (warning: string) => finish({ ok: false, warning });

      const timer = setTimeout(() => fail(`Tika did not answer within ${this.options.timeoutMs} ms`), this.options.timeoutMs);
      const onAbort = () => finish(signal?.reason instanceof Error ? signal.reason : abortError());
      signal?.addEventListener('abort', onAbort, { once: true });

      content.once('error', (error) => {
        contentFailed = error;
        finish(error);
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (contentFailed) return;
        fail(`Tika at ${this.endpoint.origin} failed: ${error.code ?? error.message}`);
      });
      request.on('response', (response) => {
        if (response.statusCode !== 200 && response.statusCode !== 204) {
          response.resume();
          const reason = response.statusCode === 415 ? 'unsupported media type' : response.statusCode === 422 ? 'could not parse the document' : 'error';
          fail(`Tika answered HTTP ${response.statusCode} (${reason})`);
          return;
        }
        const decoder = new StringDecoder('utf8');
        const parts: string[] = [];
        let length = 0;
        const take = (text: string): boolean => {
          const room = maxChars - length;
          if (text.length <= room) {
            parts.push(text);
            length += text.length;
            return false;
          }
          let cut = room;
          if (cut > 0 && isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
          parts.push(text.slice(0, cut));
          return true;
        };
        response.on('data', (chunk: Buffer) => {
          if (settled) return;
          // Tika pads its text with blank lines; trimming the start early keeps them out of maxChars.
          let text = decoder.write(chunk);
          if (length === 0) text = text.replace(/^\s+/, '');
          if (take(text)) finish({ ok: true, text: parts.join('').trimEnd(), truncated: true });
        });
        response.on('end', () => {
          const rest = decoder.end();
          const truncated = rest ? take(length === 0 ? rest.replace(/^\s+/, '') : rest) : false;
          finish({ ok: true, text: parts.join('').trimEnd(), truncated });
        });
        response.on('error', (error) => fail(`Tika's answer broke off: ${error.message}`));
      });

      pipeline(content, request, () => {
        // Errors are handled by the listeners above; the pipeline is only here for backpressure and clean-up.
      });
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

function asciiName(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1) || 'document';
  return base.replace(/[^\x20-\x7e]|["\\]/g, '_');
}
