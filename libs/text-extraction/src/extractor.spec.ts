import * as http from 'node:http';
import * as net from 'node:net';
import { Readable } from 'node:stream';
import * as iconv from 'iconv-lite';
import { createTextExtractor, type ClosableTextExtractor } from './extractor';

/** The bytes in chunks of `size` (1: every multi-byte character is split across chunks). */
function chunked(bytes: Buffer, size = 1): Readable {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks, { objectMode: false });
}

/** `total` bytes of ASCII text made as they are read; `read()` tells how many were consumed. */
function lazyText(total: number): { stream: Readable; read: () => number } {
  let sent = 0;
  const line = Buffer.from('all work and no play makes a dull document\n');
  const stream = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const n = Math.min(64 * 1024, total - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i += line.length) line.copy(chunk, i, 0, Math.min(line.length, n - i));
      sent += n;
      this.push(chunk);
    },
  });
  return { stream, read: () => sent };
}

const native = createTextExtractor({});
const limits = { maxChars: 1_000_000 };

describe('native extraction', () => {
  it('decodes UTF-8 text whose characters are split across chunks', async () => {
    const text = 'Grüße aus Köln — 東京 🙂\nline two';
    const result = await native.extract(chunked(Buffer.from(text)), { name: 'a.txt', mimeType: 'text/plain' }, limits);
    expect(result).toEqual({ text, truncated: false, method: 'native' });
  });

  it('takes the charset of the declared media type (ISO-8859-1) and a byte-order mark (UTF-16LE) over the default', async () => {
    const latin = await native.extract(chunked(iconv.encode('café crème', 'latin1'), 3), { name: 'a.txt', mimeType: 'text/plain; charset="ISO-8859-1"' }, limits);
    expect(latin.text).toBe('café crème');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('naïve résumé', 'utf-16le')]);
    // The BOM wins even over a declared charset that contradicts it.
    const bom = await native.extract(chunked(utf16, 5), { name: 'a.csv', mimeType: 'text/csv; charset=windows-1252' }, limits);
    expect(bom.text).toBe('naïve résumé');
  });

  it('strips HTML: script and style gone, entities decoded, blocks on their own lines, charset from <meta charset>', async () => {
    const html =
      '<!doctype html><html><head><meta charset="windows-1252"><title>Caf\u00e9 &amp; Co</title>' +
      '<style>p { color: red }</style><script>var hidden = "<p>not text</p>";</script></head>' +
      '<body><h1>Menu</h1><p>Cr\u00e8me br\u00fbl\u00e9e&nbsp;&mdash; 5&euro; &lt;tax&gt; &#x263A; &#169;</p>' +
      '<!-- a comment --><table><tr><td>one</td><td>two</td></tr></table><p>last</p></body></html>';
    const result = await native.extract(chunked(iconv.encode(html, 'windows-1252'), 7), { name: 'menu.html' }, limits);
    expect(result.method).toBe('native');
    expect(result.text).toBe('Café & Co\nMenu\nCrème brûlée\u00a0— 5€ <tax> ☺ ©\none two\nlast'.replace('\u00a0', ' '));
    expect(result.text).not.toMatch(/hidden|color|comment/);
  });

  it('reads the charset of <meta http-equiv="Content-Type"> (windows-1251)', async () => {
    const html = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head><body>Привет, мир</body></html>';
    const result = await native.extract(chunked(iconv.encode(html, 'windows-1251'), 4), { name: 'ru.htm', mimeType: 'text/html' }, limits);
    expect(result.text).toBe('Привет, мир');
  });

  it('strips XML to its text, CDATA included, with the encoding of its declaration', async () => {
    const xml = '<?xml version="1.0" encoding="ISO-8859-15"?><doc><title>Pr\u00e9sentation</title><body><![CDATA[5 < 6 & \u20ac]]> &amp; &#233;t\u00e9</body></doc>';
    const result = await native.extract(chunked(iconv.encode(xml, 'iso-8859-15'), 9), { name: 'doc.xml', mimeType: 'application/xml' }, limits);
    expect(result.text).toBe('Présentation\n5 < 6 & € & été');
  });

  it('keeps JSON, CSV and Markdown as they are, also when only the extension says what they are', async () => {
    for (const [name, mimeType, body] of [
      ['data.json', 'application/json', '{"title": "x & y"}'],
      ['table.csv', 'text/csv', 'a,b\n1,2'],
      ['notes.md', 'application/octet-stream', '# Title\n\n*bold* <b>kept</b>'],
      ['notes.markdown', undefined, '- item'],
    ] as const) {
      const result = await native.extract(chunked(Buffer.from(body), 2), { name, mimeType }, limits);
      expect(result).toEqual({ text: body, truncated: false, method: 'native' });
    }
  });

  it('decodes an unknown declared charset as UTF-8 and says so', async () => {
    const result = await native.extract(chunked(Buffer.from('plain ü')), { name: 'a.txt', mimeType: 'text/plain; charset=x-no-such' }, limits);
    expect(result.text).toBe('plain ü');
    expect(result.warning).toBe("unknown charset 'x-no-such' declared by a.txt: decoded as UTF-8");
  });

  it('cuts at maxChars and drains the rest of a large stream without keeping it', async () => {
    const total = 8 * 1024 * 1024;
    const { stream, read } = lazyText(total);
    const result = await native.extract(stream, { name: 'big.log', mimeType: 'text/plain' }, { maxChars: 100 });
    expect(result.truncated).toBe(true);
    expect(result.text).toHaveLength(100);
    expect(result.text.startsWith('all work and no play makes a dull document\nall work')).toBe(true);
    expect(read()).toBe(total);
    expect(stream.readableEnded).toBe(true);
  });

  it('is not truncated when the text is exactly maxChars long, and never cuts a surrogate pair in half', async () => {
    const exact = await native.extract(chunked(Buffer.from('12345')), { name: 'a.txt' }, { maxChars: 5 });
    expect(exact).toEqual({ text: '12345', truncated: false, method: 'native' });
    const emoji = await native.extract(chunked(Buffer.from('ab🙂cd')), { name: 'a.txt' }, { maxChars: 3 });
    expect(emoji).toEqual({ text: 'ab', truncated: true, method: 'native' });
  });

  it('cuts HTML after maxChars of visible text', async () => {
    const html = `<p>${'word '.repeat(1000)}</p><p>tail</p>`;
    const result = await native.extract(chunked(Buffer.from(html), 100), { name: 'a.html' }, { maxChars: 9 });
    expect(result).toEqual({ text: 'word word', truncated: true, method: 'native' });
  });

  it('rejects when the content stream fails, and when the signal aborts', async () => {
    const failing = new Readable({
      read() {
        this.destroy(new Error('source broke'));
      },
    });
    await expect(native.extract(failing, { name: 'a.txt' }, limits)).rejects.toThrow('source broke');

    const controller = new AbortController();
    const endless = new Readable({ read() {} }); // never produces: only the abort can end it
    const pending = native.extract(endless, { name: 'a.txt' }, { maxChars: 10, signal: controller.signal });
    controller.abort(new Error('job killed'));
    await expect(pending).rejects.toThrow('job killed');
    expect(endless.destroyed).toBe(true);
  });
});

describe('formats for Tika, without Tika', () => {
  it('gives metadata only, with a warning naming TIKA_URL, when no Tika is configured', async () => {
    const content = chunked(Buffer.from('%PDF-1.4 ...'), 4);
    const result = await native.extract(content, { name: 'report.pdf', mimeType: 'application/pdf' }, limits);
    expect(result).toEqual({ text: '', truncated: false, method: 'none', warning: 'no TIKA_URL configured: no text extracted from report.pdf (application/pdf)' });
    expect(content.destroyed).toBe(true);
  });

  it('sends RTF (text/rtf) and unknown binaries to Tika rather than decoding them', async () => {
    const rtf = await native.extract(chunked(Buffer.from('{\\rtf1 hello}')), { name: 'a.rtf', mimeType: 'text/rtf' }, limits);
    expect(rtf.method).toBe('none');
    const blob = await native.extract(chunked(Buffer.from([0, 1, 2])), { name: 'blob', mimeType: 'application/octet-stream' }, limits);
    expect(blob.method).toBe('none');
  });

  describe('Tika unreachable or slow', () => {
    let extractor: ClosableTextExtractor | undefined;
    let server: http.Server | undefined;
    afterEach(async () => {
      extractor?.close();
      extractor = undefined;
      if (server) {
        server.closeAllConnections();
        await new Promise((resolve) => server!.close(resolve));
        server = undefined;
      }
    });

    it('gives metadata only with the connection error when nothing listens at TIKA_URL', async () => {
      const port = await closedPort();
      extractor = createTextExtractor({ tikaUrl: `http://127.0.0.1:${port}` });
      const result = await extractor.extract(chunked(Buffer.from('PK\u0003\u0004 docx bytes'), 4), { name: 'letter.docx', mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }, limits);
      expect(result.method).toBe('none');
      expect(result.text).toBe('');
      expect(result.warning).toBe(`Tika at http://127.0.0.1:${port} failed: ECONNREFUSED: no text extracted from letter.docx (application/vnd.openxmlformats-officedocument.wordprocessingml.document)`);
    });

    it('gives up after TIKA_TIMEOUT_MS on a Tika that reads the document and never answers', async () => {
      let received = 0;
      server = http.createServer((req) => req.on('data', (c: Buffer) => (received += c.length)));
      const port = await listen(server);
      extractor = createTextExtractor({ tikaUrl: `http://127.0.0.1:${port}/`, tikaTimeoutMs: 300 });
      const body = Buffer.alloc(10_000, 'x');
      const result = await extractor.extract(chunked(body, 1000), { name: 'scan.pdf', mimeType: 'application/pdf', size: body.length }, limits);
      expect(result).toEqual({ text: '', truncated: false, method: 'none', warning: 'Tika did not answer within 300 ms: no text extracted from scan.pdf (application/pdf)' });
      expect(received).toBe(body.length); // the document did stream to it
    });

    it('rejects when the document fails on its way to Tika, and when the job is aborted', async () => {
      server = http.createServer((req) => req.resume());
      const port = await listen(server);
      extractor = createTextExtractor({ tikaUrl: `http://127.0.0.1:${port}`, tikaTimeoutMs: 60_000 });
      let pushed = false;
      const failing = new Readable({
        read() {
          if (!pushed) {
            pushed = true;
            this.push(Buffer.from('%PDF-1.7'));
          } else setTimeout(() => this.destroy(new Error('source broke')), 10);
        },
      });
      await expect(extractor.extract(failing, { name: 'a.pdf', mimeType: 'application/pdf' }, limits)).rejects.toThrow('source broke');

      const controller = new AbortController();
      const endless = new Readable({ read() {} });
      const pending = extractor.extract(endless, { name: 'a.pdf' }, { maxChars: 10, signal: controller.signal });
      setTimeout(() => controller.abort(new Error('job killed')), 20);
      await expect(pending).rejects.toThrow('job killed');
      expect(endless.destroyed).toBe(true);
    });
  });
});

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

/** A port that was free a moment ago and has nothing listening now. */
async function closedPort(): Promise<number> {
  const probe = net.createServer();
  const port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)));
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
