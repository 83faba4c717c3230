import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { CmisClient } from './cmis-client';

/**
 * Uploads against a plain HTTP server that reads the whole multipart body before it answers, as a CMIS
 * browser binding does: the body the client sends must be complete (its closing boundary) whatever
 * chunks the source stream hands over, empty ones included.
 */
describe('CmisClient.createDocument: the multipart body', () => {
  let server: http.Server;
  let received: Buffer[];

  beforeEach(async () => {
    received = [];
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push(Buffer.concat(chunks));
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ succinctProperties: { 'cmis:objectId': `doc-${received.length}` } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

  // A short idle time-out: a body that never ends fails the test in seconds, not at the default.
  const client = (): CmisClient =>
    new CmisClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cmis/browser`, repositoryId: 'A1', user: 'u', password: 'p', timeoutMs: 3_000 });

  const upload = (chunks: Array<Buffer | string>) =>
    client().createDocument('folder-1', { 'cmis:name': 'a.txt' }, { stream: Readable.from(chunks), mimeType: 'text/plain', fileName: 'a.txt' }, 'major');

  /** The file part's content in a received multipart body (between its headers and the closing boundary). */
  const filePart = (body: Buffer): string => {
    const text = body.toString('utf8');
    const boundary = text.slice(0, text.indexOf('\r\n'));
    expect(text.endsWith(`\r\n${boundary}--\r\n`)).toBe(true);
    const start = text.indexOf('\r\n\r\n', text.indexOf('name="content"')) + 4;
    return text.slice(start, text.length - `\r\n${boundary}--\r\n`.length);
  };

  it.each([
    ['no chunk at all', [], ''],
    ['one empty chunk', [Buffer.alloc(0)], ''],
    ['empty chunks between others', [Buffer.alloc(0), Buffer.from('ab'), Buffer.alloc(0), 'c', Buffer.alloc(0)], 'abc'],
    ['one chunk', [Buffer.from('x')], 'x'],
  ])('%s: the whole body arrives and the document is made', async (_case, chunks, content) => {
    await expect(upload(chunks)).resolves.toMatchObject({ succinctProperties: { 'cmis:objectId': 'doc-1' } });
    expect(received).toHaveLength(1);
    expect(filePart(received[0])).toBe(content);
  });
});
