import type { Request, Response } from 'express';
import { PassThrough } from 'node:stream';
import { text } from 'node:stream/consumers';
import { IncomingContent, limitBytes, mediaTypeOf } from './incoming-content';

function requestWith(headers: Record<string, string>, chunks: string[] | 'open'): Request {
  const stream = new PassThrough();
  if (chunks !== 'open') {
    for (const c of chunks) stream.write(c);
    stream.end();
  }
  return Object.assign(stream, { headers }) as unknown as Request;
}

const content = (req: Request) => new IncomingContent(req, {} as Response);

describe('IncomingContent.rawBody', () => {
  it('has no body without Content-Length and Transfer-Encoding, or with Content-Length: 0', async () => {
    expect(await content(requestWith({}, [])).rawBody()).toBeUndefined();
    expect(await content(requestWith({ 'content-length': '0' }, [])).rawBody()).toBeUndefined();
  });

  it('hands over a body with a Content-Length as it is, unread', async () => {
    const req = requestWith({ 'content-length': '5' }, ['hello']);
    const body = await content(req).rawBody();
    expect(body).toBe(req);
    expect(await text(body!)).toBe('hello');
  });

  it('finds a chunked body that ends without a byte empty', async () => {
    expect(await content(requestWith({ 'transfer-encoding': 'chunked' }, [])).rawBody()).toBeUndefined();
  });

  it('gives back every byte of a chunked body it peeked at, the first chunk included', async () => {
    const req = requestWith({ 'transfer-encoding': 'chunked' }, ['first,', 'second,', 'third']);
    const body = await content(req).rawBody();
    expect(body).toBeDefined();
    expect(await text(body!)).toBe('first,second,third');
  });

  it('waits for the first chunk of a slow chunked body', async () => {
    const req = requestWith({ 'transfer-encoding': 'chunked' }, 'open');
    const pending = content(req).rawBody();
    setTimeout(() => {
      (req as unknown as PassThrough).end('late');
    }, 20);
    const body = await pending;
    expect(await text(body!)).toBe('late');
  });
});

describe('mediaTypeOf', () => {
  it('keeps the lower-cased essence only', () => {
    expect(mediaTypeOf('Multipart/Form-Data; boundary=x')).toBe('multipart/form-data');
    expect(mediaTypeOf('')).toBeUndefined();
    expect(mediaTypeOf(undefined)).toBeUndefined();
  });
});

describe('limitBytes', () => {
  it('passes a body within the limit through unchanged', async () => {
    const source = new PassThrough();
    const limited = limitBytes(source, 5);
    source.end('hello');
    expect(await text(limited)).toBe('hello');
  });

  it('fails with 413 once more than the limit passed', async () => {
    const source = new PassThrough();
    const limited = limitBytes(source, 4);
    source.end('hello');
    await expect(text(limited)).rejects.toMatchObject({ kind: 'payload_too_large' });
  });

  it('keeps a source error for a consumer that starts reading only later (a driver awaiting a token first)', async () => {
    const source = new PassThrough();
    const limited = limitBytes(source, 100);
    // Without a listener on the limited stream yet, this must not become an uncaught error.
    source.destroy(new Error('Unexpected end of form'));
    await new Promise((resolve) => setImmediate(resolve));
    await expect(text(limited)).rejects.toThrow('Unexpected end of form');
  });
});
