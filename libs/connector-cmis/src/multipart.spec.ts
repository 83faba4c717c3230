import { PassThrough, Readable } from 'node:stream';
import { multipartBody } from './multipart';

async function collect(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

describe('multipart/form-data body as a stream', () => {
  it('writes the fields, the file part and the closing boundary', async () => {
    const { contentType, body } = multipartBody([['cmisaction', 'createDocument'], ['propertyValue[0]', 'été ✓']], {
      field: 'content',
      fileName: 'a "quoted"\r\nname.txt',
      mimeType: 'text/plain',
      content: Readable.from([Buffer.from('hello '), Buffer.from('world')]),
    });
    const boundary = /boundary=(.+)$/.exec(contentType)![1];
    expect(await collect(body)).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="cmisaction"\r\n\r\ncreateDocument\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="propertyValue[0]"\r\n\r\nété ✓\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="content"; filename="a %22quoted%22  name.txt"\r\nContent-Type: text/plain\r\n\r\n` +
        `hello world\r\n--${boundary}--\r\n`,
    );
  });

  it('hands each chunk of the file on as it arrives, without waiting for the rest', async () => {
    const source = new PassThrough();
    const seen: number[] = [];
    const { body } = multipartBody([], { field: 'content', fileName: 'f', mimeType: 'application/octet-stream', content: source }, { onChunk: () => seen.push(1) });
    const it = body[Symbol.asyncIterator]();
    expect(Buffer.from((await it.next()).value).toString()).toContain('name="content"');
    source.write(Buffer.from('first'));
    expect(Buffer.from((await it.next()).value).toString()).toBe('first');
    source.write(Buffer.from('second'));
    expect(Buffer.from((await it.next()).value).toString()).toBe('second');
    source.end();
    expect(Buffer.from((await it.next()).value).toString()).toMatch(/^\r\n--.+--\r\n$/);
    expect((await it.next()).done).toBe(true);
    expect(seen.length).toBe(4);
  });

  it('reports a failing source and stops', async () => {
    const source = new PassThrough();
    let reported: unknown;
    const { body } = multipartBody([], { field: 'content', fileName: 'f', mimeType: 'text/plain', content: source }, { onSourceError: (e) => (reported = e) });
    const it = body[Symbol.asyncIterator]();
    await it.next();
    source.destroy(new Error('client went away'));
    await expect(it.next()).rejects.toThrow('client went away');
    expect((reported as Error).message).toBe('client went away');
  });
});
