import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import * as iconv from 'iconv-lite';
import { TEXT_EXTRACTOR, type TextExtractor } from '@gateway/text-extraction';
import { startEngines, type TikaInfo } from '../engines';
import { DOCX_MIME, PDF_MIME, writeDocument } from '../support/documents';
import { startGateway, type TestGateway } from '../support/gateway';

/**
 * Text extraction against the real Apache Tika Server of the engine harness, through the extractor
 * the gateway builds from TIKA_URL (the one indexing jobs receive under TEXT_EXTRACTOR). Documents
 * stream from files, as they stream from a connector.
 */
jest.setTimeout(300_000);

describe('text extraction with Tika Server', () => {
  let tika: TikaInfo;
  let stopTika: () => Promise<void>;
  let gw: TestGateway;
  let extractor: TextExtractor;
  let folder: string;

  const fromFile = async (name: string, mimeType: string | undefined, maxChars = 1_000_000) => {
    const file = path.join(folder, name);
    return extractor.extract(fs.createReadStream(file, { highWaterMark: 4096 }), { name, mimeType, size: fs.statSync(file).size }, { maxChars });
  };

  beforeAll(async () => {
    // A Tika of its own, never a shared one: the last test stops it.
    const handles = await startEngines(['tika'], { log: () => undefined });
    const { stop, ...info } = handles.tika;
    tika = info;
    stopTika = stop;
    gw = await startGateway({ env: { TIKA_URL: tika.url, TIKA_TIMEOUT_MS: '120000' } });
    extractor = gw.app.get<TextExtractor>(TEXT_EXTRACTOR);
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'text-extraction-e2e-'));
  });

  afterAll(async () => {
    await gw?.close();
    await stopTika?.();
    if (folder) fs.rmSync(folder, { recursive: true, force: true });
  });

  it('reads the known text of a PDF made in the test', async () => {
    await writeDocument(folder, 'quarterly report.pdf', 'pdf', {
      title: 'Quarterly report of the aardvark department',
      paragraphs: ['Revenue grew by twelve percent in zanzibar.', 'Caf\u00e9 cr\u00e8me sales doubled.'],
    });
    const result = await fromFile('quarterly report.pdf', PDF_MIME);
    expect(result.method).toBe('tika');
    expect(result.truncated).toBe(false);
    expect(result.warning).toBeUndefined();
    expect(result.text).toContain('Quarterly report of the aardvark department');
    expect(result.text).toContain('Revenue grew by twelve percent in zanzibar.');
    expect(result.text).toContain('Caf\u00e9 cr\u00e8me sales doubled.');
    // The file itself does not spell the words (compressed content stream): Tika really parsed it.
    expect(fs.readFileSync(path.join(folder, 'quarterly report.pdf')).includes('zanzibar')).toBe(false);
  });

  it('reads the known text of a DOCX made in the test, also when only its name says what it is', async () => {
    await writeDocument(folder, 'minutes.docx', 'docx', {
      title: 'Minutes of the wombat committee',
      paragraphs: ['The committee approved the quokka budget.', 'Next meeting: Thursday.'],
    });
    for (const mimeType of [DOCX_MIME, 'application/octet-stream']) {
      const result = await fromFile('minutes.docx', mimeType);
      expect(result.method).toBe('tika');
      expect(result.text).toContain('Minutes of the wombat committee');
      expect(result.text).toContain('The committee approved the quokka budget.');
      expect(result.text).toContain('Next meeting: Thursday.');
    }
  });

  it("cuts Tika's answer at maxChars", async () => {
    const paragraphs = Array.from({ length: 200 }, (_, i) => `Paragraph ${i} of a long document about pangolins.`);
    await writeDocument(folder, 'long.docx', 'docx', { title: 'Long', paragraphs });
    const result = await fromFile('long.docx', DOCX_MIME, 300);
    expect(result.method).toBe('tika');
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(300);
    expect(result.text).toContain('Paragraph 0 of a long document about pangolins.');
    expect(result.text).not.toContain('Paragraph 199');
  });

  it('decodes HTML natively: entities, a non-UTF-8 charset from <meta>, no script or style', async () => {
    const html =
      '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><title>Men\u00fc</title>' +
      '<script>document.write("invisible")</script><style>body{}</style></head>' +
      '<body><p>Sch\u00f6ne Gr\u00fc\u00dfe &amp; &quot;Gr&uuml;&szlig;e&quot; &#8364;5 &lt;ok&gt;</p></body></html>';
    fs.writeFileSync(path.join(folder, 'menu.html'), iconv.encode(html, 'latin1'));
    const result = await fromFile('menu.html', 'text/html');
    expect(result).toEqual({ method: 'native', truncated: false, text: 'Menü\nSchöne Grüße & "Grüße" €5 <ok>' });
  });

  it('gives metadata only, with a warning naming why, once Tika is stopped; text formats still work', async () => {
    await stopTika();
    const result = await fromFile('minutes.docx', DOCX_MIME);
    expect(result.method).toBe('none');
    expect(result.text).toBe('');
    expect(result.warning).toBe(`Tika at ${tika.url} failed: ECONNREFUSED: no text extracted from minutes.docx (${DOCX_MIME})`);
    const html = await extractor.extract(Readable.from([Buffer.from('<p>still &amp; here</p>')]), { name: 'a.html' }, { maxChars: 100 });
    expect(html).toEqual({ method: 'native', truncated: false, text: 'still & here' });
  });
});
