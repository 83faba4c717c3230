import * as http from 'node:http';
import { Readable } from 'node:stream';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer | string | Readable;
  /** Source address of the client's socket: any 127.x.y.z is a distinct client of a loopback server. */
  localAddress?: string;
}

/** One HTTP request with everything under the caller's control (source address included); the answer read whole. */
export function rawRequest(url: string, options: RawRequest = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers, localAddress: options.localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const body = options.body;
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

export const json = (answer: RawAnswer) => JSON.parse(answer.body.toString('utf8'));

/** A multipart/form-data body with one file part named `file`, streamed (the content is never joined into one buffer). */
export function multipartFile(fileName: string, content: Buffer | Readable): { headers: Record<string, string>; body: Readable } {
  const boundary = `----gateway-test-${Date.now().toString(36)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    if (Buffer.isBuffer(content)) yield content;
    else for await (const chunk of content) yield chunk as Buffer;
    yield tail;
  }
  return { headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` }, body: Readable.from(parts(), { objectMode: false }) };
}
