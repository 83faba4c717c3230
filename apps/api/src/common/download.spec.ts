import { Logger, type ArgumentsHost } from '@nestjs/common';
import express, { type NextFunction, type Request, type Response } from 'express';
import { once } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import request from 'supertest';
import { NotFoundError } from '@gateway/errors';
import { sendDownload, strongEtag, type DownloadOptions, type DownloadOutcome, type DownloadSource } from './download';
import { GatewayExceptionFilter } from './exception.filter';

const CONTENT = Buffer.from('0123456789abcdefghij'); // 20 bytes, every offset distinct
const MODIFIED = new Date('2024-05-06T07:08:09.000Z');

/** `opened` records each call of open(): 'whole' or the range asked for, so an empty list means none. */
function source(overrides: Partial<DownloadSource> = {}): DownloadSource & { opened: unknown[] } {
  const opened: unknown[] = [];
  return {
    size: CONTENT.length,
    mimeType: 'text/plain',
    fileName: 'notes.txt',
    etag: 'v1',
    lastModified: MODIFIED,
    open: (range) => {
      opened.push(range ?? 'whole');
      return Readable.from([range ? CONTENT.subarray(range.start, range.end + 1) : CONTENT]);
    },
    opened,
    ...overrides,
  };
}

/**
 * An app that serves `current` the way the controllers do, its errors going to the gateway's own
 * exception filter. `errors` collects every error; `served` settles once sendDownload has, so a test
 * can tell that nothing failed after the last byte went out.
 */
function appFor(get: () => DownloadSource, errors: unknown[] = [], options: () => DownloadOptions = () => ({})) {
  const app = express();
  // Express would tag the JSON error bodies itself; the test looks for the download's ETag only.
  app.set('etag', false);
  const filter = new GatewayExceptionFilter();
  const state = { served: Promise.resolve() };
  app.all('/file', (req, res, next) => {
    state.served = sendDownload(req, res, get(), options()).catch(next);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    errors.push(err);
    const host = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
    filter.catch(err, host);
  });
  return { app, state };
}

const binary = (res: NodeJS.ReadableStream, cb: (e: Error | null, b: Buffer) => void) => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

// The filter logs unexpected errors; the tests below cause some on purpose.
beforeAll(() => Logger.overrideLogger(false));

describe('sendDownload', () => {
  let current = source();
  let options: DownloadOptions = {};
  const errors: unknown[] = [];
  const { app, state } = appFor(() => current, errors, () => options);
  beforeEach(() => {
    current = source();
    options = {};
    errors.length = 0;
  });
  /** The server side finished without an error, after the last byte as well as before. */
  const expectServedCleanly = async () => {
    await state.served;
    expect(errors).toEqual([]);
  };
  const send = (method: 'get' | 'head' | 'post', headers: Record<string, string> = {}) => {
    let r = request(app)[method]('/file');
    for (const [k, v] of Object.entries(headers)) r = r.set(k, v);
    return method === 'head' ? r : r.buffer(true).parse(binary as never);
  };
  const get = (headers: Record<string, string> = {}) => send('get', headers);

  it('streams the whole content with its headers', async () => {
    const res = await get().expect(200);
    expect(res.body).toEqual(CONTENT);
    expect(res.headers).toMatchObject({
      'content-type': 'text/plain',
      'content-length': '20',
      etag: '"v1"',
      'last-modified': MODIFIED.toUTCString(),
      'accept-ranges': 'bytes',
      'cache-control': 'private, no-cache',
      'x-content-type-options': 'nosniff',
      'content-disposition': 'attachment; filename=notes.txt',
    });
    expect(res.headers['content-range']).toBeUndefined();
    expect(current.opened).toEqual(['whole']);
    await expectServedCleanly();
  });

  it('adds an RFC 8187 filename* with an ASCII fallback for other names', async () => {
    current = source({ fileName: 'Grüße €.txt' });
    const res = await get().expect(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Gr__e _.txt"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20%E2%82%AC.txt`);
  });

  it('names a nameless document "download"', async () => {
    current = source({ fileName: '' });
    expect((await get().expect(200)).headers['content-disposition']).toBe('attachment; filename=download');
  });

  it('takes the disposition and Cache-Control it is given', async () => {
    options = { disposition: 'inline', cacheControl: 'private, max-age=60' };
    const res = await get().expect(200);
    expect(res.headers['content-disposition']).toBe('inline; filename=notes.txt');
    expect(res.headers['cache-control']).toBe('private, max-age=60');
  });

  it('defaults the media type and never appends a charset of its own', async () => {
    current = source({ mimeType: undefined });
    expect((await get().expect(200)).headers['content-type']).toBe('application/octet-stream');
  });

  it.each([
    ['no validators', { etag: undefined, lastModified: undefined }],
    ['an empty ETag and an invalid date', { etag: '', lastModified: new Date(Number.NaN) }],
  ])('sends no ETag or Last-Modified for %s', async (_what, overrides) => {
    current = source(overrides);
    const res = await get({ 'If-Modified-Since': MODIFIED.toUTCString() }).expect(200);
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['last-modified']).toBeUndefined();
    expect(res.body).toEqual(CONTENT);
  });

  describe('conditional requests', () => {
    it.each([
      [{ 'If-None-Match': '"v1"' }, 304],
      [{ 'If-None-Match': 'W/"v1"' }, 304],
      [{ 'If-None-Match': '"a", "v1"' }, 304],
      [{ 'If-None-Match': '*' }, 304],
      [{ 'If-None-Match': '"v2"' }, 200],
      [{ 'If-None-Match': 'v1' }, 200],
      [{ 'If-Modified-Since': MODIFIED.toUTCString() }, 304],
      [{ 'If-Modified-Since': new Date(MODIFIED.getTime() + 1000).toUTCString() }, 304],
      [{ 'If-Modified-Since': new Date(MODIFIED.getTime() - 1000).toUTCString() }, 200],
      [{ 'If-Modified-Since': 'not a date' }, 200],
      // If-None-Match decides alone when present.
      [{ 'If-None-Match': '"v2"', 'If-Modified-Since': MODIFIED.toUTCString() }, 200],
    ])('%j answers %i', async (headers, status) => {
      const res = await get(headers).expect(status);
      if (status === 304) {
        expect(res.headers.etag).toBe('"v1"');
        expect(res.headers['last-modified']).toBe(MODIFIED.toUTCString());
        expect(res.headers['cache-control']).toBe('private, no-cache');
        expect(res.headers['content-length']).toBeUndefined();
        expect(res.headers['content-disposition']).toBeUndefined();
        expect(res.body).toEqual(Buffer.alloc(0));
        expect(current.opened).toEqual([]);
      } else {
        expect(res.body).toEqual(CONTENT);
        expect(current.opened).toEqual(['whole']);
      }
    });

    it('answers a HEAD with 304 too', async () => {
      await send('head', { 'If-None-Match': '"v1"' }).expect(304);
      expect(current.opened).toEqual([]);
    });

    it('leaves methods other than GET and HEAD unconditional', async () => {
      const res = await send('post', { 'If-None-Match': '*' }).expect(200);
      expect(res.body).toEqual(CONTENT);
    });

    it('compares Last-Modified at one-second resolution', async () => {
      current = source({ lastModified: new Date(MODIFIED.getTime() + 999) });
      await get({ 'If-Modified-Since': MODIFIED.toUTCString() }).expect(304);
      current = source({ lastModified: new Date(MODIFIED.getTime() + 1000) });
      await get({ 'If-Modified-Since': MODIFIED.toUTCString() }).expect(200);
    });

    it('never answers 304 on If-None-Match without an ETag to compare', async () => {
      current = source({ etag: undefined });
      const res = await get({ 'If-None-Match': '"v1"', 'If-Modified-Since': MODIFIED.toUTCString() }).expect(200);
      expect(res.headers.etag).toBeUndefined();
    });

    it('compares the quoted form of an ETag the source gave already quoted', async () => {
      current = source({ etag: '"abc"' });
      await get({ 'If-None-Match': '"abc"' }).expect(304);
    });
  });

  describe('ranges', () => {
    it.each([
      ['bytes=0-4', 0, 4],
      ['bytes=15-', 15, 19],
      ['bytes=-3', 17, 19],
      ['bytes=18-1000', 18, 19],
      ['bytes=5-9', 5, 9],
    ])('%s answers 206 with bytes %i-%i', async (range, start, end) => {
      const res = await get({ Range: range }).expect(206);
      expect(res.body).toEqual(CONTENT.subarray(start, end + 1));
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/20`);
      expect(res.headers['content-length']).toBe(String(end - start + 1));
      expect(res.headers['accept-ranges']).toBe('bytes');
      expect(current.opened).toEqual([{ start, end }]);
      await expectServedCleanly();
    });

    it('throws a range error the exception filter answers with 416 and the size, opening nothing', async () => {
      const res = await request(app).get('/file').set('Range', 'bytes=20-30').expect(416);
      expect(res.headers['content-range']).toBe('bytes */20');
      expect(res.headers['accept-ranges']).toBe('bytes');
      expect(res.headers['content-disposition']).toBeUndefined();
      expect(res.headers.etag).toBeUndefined();
      expect(res.body).toEqual({
        success: false,
        message: 'The requested range cannot be served from 20 bytes',
        error: { code: 'RANGE_NOT_SATISFIABLE', parameter: 'Range', size: 20 },
      });
      expect(current.opened).toEqual([]);
    });

    it.each(['bytes=0-1,5-6', 'bytes=x-y', 'lines=0-1', 'bytes'])('serves the whole content for %s', async (range) => {
      const res = await get({ Range: range }).expect(200);
      expect(res.body).toEqual(CONTENT);
      expect(res.headers['content-range']).toBeUndefined();
      expect(current.opened).toEqual(['whole']);
    });

    it('merges overlapping ranges into one', async () => {
      const res = await get({ Range: 'bytes=0-4,3-9' }).expect(206);
      expect(res.headers['content-range']).toBe('bytes 0-9/20');
    });

    it.each([
      ['"v1"', 206],
      ['W/"v1"', 200],
      ['"v0"', 200],
      [MODIFIED.toUTCString(), 206],
      [new Date(MODIFIED.getTime() - 1000).toUTCString(), 200],
      ['not a date', 200],
    ])('with If-Range %s answers %i', async (ifRange, status) => {
      await get({ Range: 'bytes=0-0', 'If-Range': ifRange }).expect(status);
    });

    it.each([
      ['ETag', { etag: undefined }, '"v1"'],
      ['Last-Modified', { lastModified: undefined }, MODIFIED.toUTCString()],
    ])('serves the whole content when If-Range names a %s the source lacks', async (_what, overrides, ifRange) => {
      current = source(overrides);
      const res = await get({ Range: 'bytes=0-0', 'If-Range': ifRange }).expect(200);
      expect(res.body).toEqual(CONTENT);
    });

    it('offers no ranges when the size is unknown, and streams chunked', async () => {
      current = source({ size: undefined });
      const res = await get({ Range: 'bytes=0-0' }).expect(200);
      expect(res.body).toEqual(CONTENT);
      expect(res.headers['accept-ranges']).toBe('none');
      expect(res.headers['content-length']).toBeUndefined();
      expect(current.opened).toEqual(['whole']);
      await expectServedCleanly();
    });
  });

  it('answers HEAD with the headers and without opening the content', async () => {
    const res = await send('head', { Range: 'bytes=0-4' }).expect(200);
    expect(res.headers['content-length']).toBe('20');
    expect(res.headers['content-range']).toBeUndefined();
    expect(res.headers.etag).toBe('"v1"');
    expect(res.headers['content-disposition']).toBe('attachment; filename=notes.txt');
    expect(current.opened).toEqual([]);
    await expectServedCleanly();
  });

  it('lets an error of open() reach the error handler, with no download header set', async () => {
    current = source({
      open: () => {
        throw new NotFoundError('item', 'x');
      },
    });
    const res = await request(app).get('/file').expect(404);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
    expect(res.body).toMatchObject({ success: false, error: { code: 'ITEM_NOT_FOUND' } });
  });

  describe('on a real socket', () => {
    let server: http.Server;
    let port: number;
    beforeAll(async () => {
      server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('cuts the connection when the source fails after the headers went out', async () => {
      const failing = new PassThrough();
      current = source({ open: () => failing });
      let status: number | undefined;
      const outcome = await new Promise<string>((resolve) => {
        const req = http.get({ port, host: '127.0.0.1', path: '/file', agent: false }, (res) => {
          status = res.statusCode;
          res.once('data', () => failing.destroy(new Error('disk gone')));
          res.on('end', () => resolve('ended normally'));
          res.on('error', () => resolve('cut'));
          res.on('aborted', () => resolve('cut'));
        });
        req.on('error', () => resolve('cut'));
        failing.write(CONTENT.subarray(0, 5));
      });
      // Asserted here, not in the callback: an expect thrown inside an http callback fails no test.
      expect(status).toBe(200);
      expect(outcome).toBe('cut');
      await state.served;
      expect(errors).toEqual([expect.objectContaining({ message: 'disk gone' })]);
    });

    it.each([
      ['longer', 25],
      ['shorter', 10],
    ])('fails the answer and cuts the connection when the content is %s than the size it was described with', async (what, actual) => {
      current = source({ open: () => Readable.from([Buffer.alloc(actual, 7)]) });
      const outcome = await new Promise<string>((resolve) => {
        const req = http.get({ port, host: '127.0.0.1', path: '/file', agent: false }, (res) => {
          let received = 0;
          res.on('data', (c: Buffer) => (received += c.length));
          res.on('end', () => resolve(`ended after ${received} bytes`));
          res.on('error', () => resolve('cut'));
          res.on('aborted', () => resolve('cut'));
        });
        req.on('error', () => resolve('cut'));
      });
      expect(outcome).toBe('cut');
      // Reported as a server-side failure, not left to the client's parser to notice.
      await state.served;
      expect(errors).toHaveLength(1);
      expect((errors[0] as Error).message).toMatch(what === 'longer' ? /longer than the 20 bytes/ : /ended after 10 of the 20 bytes/);
    });

    it('checks the length of a range against the range, not the whole', async () => {
      current = source({ open: () => Readable.from([CONTENT.subarray(5, 11)]) });
      const outcome = await new Promise<string>((resolve) => {
        const req = http.get({ port, host: '127.0.0.1', path: '/file', agent: false, headers: { Range: 'bytes=5-9' } }, (res) => {
          res.resume();
          res.on('end', () => resolve('ended normally'));
          res.on('error', () => resolve('cut'));
          res.on('aborted', () => resolve('cut'));
        });
        req.on('error', () => resolve('cut'));
      });
      expect(outcome).toBe('cut');
      await state.served;
      expect((errors[0] as Error).message).toMatch(/longer than the 5 bytes/);
    });

    it('destroys the source when the client goes away, and reports nothing', async () => {
      const endless = new Readable({
        read() {
          setTimeout(() => this.push(Buffer.alloc(64 * 1024, 1)), 1);
        },
      });
      current = source({ size: 1024 * 1024 * 1024, open: () => endless });
      await new Promise<void>((resolve) => {
        const req = http.get({ port, host: '127.0.0.1', path: '/file', agent: false }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => undefined);
      });
      // The source's own 'close' is the event; a source never closed leaves the test to time out.
      if (!endless.destroyed) await once(endless, 'close');
      expect(endless.destroyed).toBe(true);
      await expectServedCleanly();
    });
  });
});

describe('strongEtag', () => {
  it('quotes plain validators, keeps quoted ones, and hashes values a header cannot carry', () => {
    expect(strongEtag('abc-123')).toBe('"abc-123"');
    expect(strongEtag('"abc"')).toBe('"abc"');
    expect(strongEtag('""')).toBe('""');
    expect(strongEtag('a"b')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(strongEtag('"a"b"')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(strongEtag('has space"quote')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(strongEtag('has space')).toBe(`"${createHash('sha256').update('has space').digest('base64url')}"`);
    expect(strongEtag('ümlaut')).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
  });
});

describe('sendDownload with a hand-off (the download offload)', () => {
  const handOffTo = (value: string | undefined, calls: unknown[]) =>
    source({
      handOff: async (range) => {
        calls.push(range ?? 'whole');
        return value === undefined ? undefined : { header: 'X-Accel-Redirect', value };
      },
    });

  it('sets every header of a download, the hand-off header, and no body; open is never called', async () => {
    const calls: unknown[] = [];
    const src = handOffTo('/_offload/repo/fs/notes.txt', calls);
    const { app } = appFor(() => src);
    const res = await request(app).get('/file').buffer(true).parse(binary as never).expect(200);
    expect(res.headers['x-accel-redirect']).toBe('/_offload/repo/fs/notes.txt');
    expect(res.headers).toMatchObject({
      etag: '"v1"',
      'last-modified': MODIFIED.toUTCString(),
      'content-type': 'text/plain',
      'content-disposition': 'attachment; filename=notes.txt',
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, no-cache',
    });
    expect(res.body.length).toBe(0);
    expect(src.opened).toEqual([]);
    expect(calls).toEqual(['whole']);
  });

  it('hands off markup with the protection of a streamed download: attachment even when inline is asked, CSP, ASCII fallback', async () => {
    const src = { ...handOffTo('/x', []), mimeType: 'image/svg+xml', fileName: 'Plan ü.svg' };
    const { app } = appFor(() => src, [], () => ({ disposition: 'inline' }));
    const res = await request(app).get('/file').expect(200);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Plan _.svg"; filename*=UTF-8''Plan%20%C3%BC.svg`);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'; sandbox");
    const plain = { ...handOffTo('/x', []), fileName: 'Plan ü.txt' };
    const inline = await request(appFor(() => plain, [], () => ({ disposition: 'inline' })).app).get('/file').expect(200);
    expect(inline.headers['content-disposition']).toBe(`inline; filename="Plan _.txt"; filename*=UTF-8''Plan%20%C3%BC.txt`);
  });

  it('passes the range it resolved (for counting) and leaves 304 and 416 to the gateway', async () => {
    const calls: unknown[] = [];
    const src = handOffTo('/x', calls);
    const { app } = appFor(() => src);
    await request(app).get('/file').set('Range', 'bytes=5-9').expect(200);
    expect(calls).toEqual([{ start: 5, end: 9 }]);
    await request(app).get('/file').set('If-None-Match', '"v1"').expect(304);
    await request(app).get('/file').set('Range', 'bytes=50-').expect(416);
    await request(app).head('/file').expect(200);
    // 304, 416 and HEAD never hand off (nor count).
    expect(calls).toEqual([{ start: 5, end: 9 }]);
  });

  it('streams as usual when the hand-off declines', async () => {
    const calls: unknown[] = [];
    const src = handOffTo(undefined, calls);
    const { app } = appFor(() => src);
    const res = await request(app).get('/file').buffer(true).parse(binary as never).expect(200);
    expect(res.body.equals(CONTENT)).toBe(true);
    expect(res.headers['x-accel-redirect']).toBeUndefined();
    expect(src.opened).toEqual(['whole']);
  });
});

describe('sendDownload onServed (the access audit hook)', () => {
  let current = source();
  let outcomes: DownloadOutcome[] = [];
  const { app, state } = appFor(
    () => current,
    [],
    () => ({ onServed: (o) => outcomes.push(o) }),
  );
  beforeEach(() => {
    current = source();
    outcomes = [];
  });

  it('tells once how a whole download ended: every byte, complete', async () => {
    await request(app).get('/file').buffer(true).parse(binary as never).expect(200);
    await state.served;
    expect(outcomes).toEqual([{ bytes: CONTENT.length, result: 'complete', ranged: false, offloaded: false }]);
  });

  it('a range: the bytes of the range, ranged', async () => {
    await request(app).get('/file').set('Range', 'bytes=5-9').buffer(true).parse(binary as never).expect(206);
    await state.served;
    expect(outcomes).toEqual([{ bytes: 5, result: 'complete', ranged: true, offloaded: false }]);
  });

  it('HEAD, 304 and a refused range read no content and tell nothing', async () => {
    await request(app).head('/file').expect(200);
    await request(app).get('/file').set('If-None-Match', '"v1"').expect(304);
    await request(app).get('/file').set('Range', 'bytes=50-60').expect(416);
    await state.served;
    expect(outcomes).toEqual([]);
  });

  it('an open() that fails: error, no bytes', async () => {
    current = source({
      open: () => {
        throw new NotFoundError('item', 'x');
      },
    });
    await request(app).get('/file').expect(404);
    expect(outcomes).toEqual([{ bytes: 0, result: 'error', ranged: false, offloaded: false }]);
  });

  it('a source that fails after some bytes: error', async () => {
    current = source({
      size: 100,
      open: () => {
        const broken = new PassThrough();
        broken.write(CONTENT);
        setTimeout(() => broken.destroy(new Error('gone')), 20);
        return broken;
      },
    });
    await request(app)
      .get('/file')
      .buffer(true)
      .parse(binary as never)
      .catch(() => undefined);
    await state.served;
    expect(outcomes).toEqual([{ bytes: expect.any(Number) as number, result: 'error', ranged: false, offloaded: false }]);
    expect(outcomes[0].bytes).toBeLessThanOrEqual(CONTENT.length);
  });

  it('a client that goes away: cut, with fewer bytes than announced', async () => {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const big = Buffer.alloc(32 * 1024 * 1024, 1);
      current = source({ size: big.length, open: () => Readable.from((function* () { for (let at = 0; at < big.length; at += 65536) yield big.subarray(at, at + 65536); })()) });
      await new Promise<void>((resolve) => {
        const req = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/file`, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', () => undefined);
      });
      await state.served;
      expect(outcomes).toEqual([{ bytes: expect.any(Number) as number, result: 'cut', ranged: false, offloaded: false }]);
      expect(outcomes[0].bytes).toBeLessThan(big.length);
    } finally {
      server.close();
    }
  });

  it('a hand-off: complete, offloaded, with the length handed to the proxy', async () => {
    current = source({ handOff: () => Promise.resolve({ header: 'X-Accel-Redirect', value: '/_offload/x' }) });
    await request(app).get('/file').set('Range', 'bytes=0-3').expect(200);
    expect(outcomes).toEqual([{ bytes: 4, result: 'complete', ranged: true, offloaded: true }]);
  });
});
