/**
 * The Graph simulator driven by code no one here wrote: @azure/msal-node for the token (certificate
 * credential, knownAuthorities so no instance discovery) and @microsoft/microsoft-graph-client for
 * the API — listing with its PageIterator, download through its RedirectHandler, small upload, the
 * LargeFileUploadTask, versions and permissions. Every Graph body the simulator sent meanwhile must
 * validate against Microsoft's published schemas (GET /_simulator/violations).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { ConfidentialClientApplication } from '@azure/msal-node';
import { Client, FileUpload, LargeFileUploadTask, PageIterator, type PageCollection } from '@microsoft/microsoft-graph-client';
import { Agent } from 'undici';
import { SimulatorControl } from '../engines/simulators/common/control';
import { SchemaChecker } from '../engines/simulators/graph/fidelity';
import { caNetworkModule } from '../engines/simulators/common/msal-network';
import { useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function patterned(size: number, seed: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 10)) & 0xff;
  return b;
}

async function readAll(body: unknown): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('Graph simulator fidelity: msal-node and microsoft-graph-client against it', () => {
  let engine: GraphEngine;
  let client: Client;
  let control: SimulatorControl;
  let drive: string;
  let folder: string;
  let tokenCalls = 0;

  beforeAll(async () => {
    engine = await useGraphEngine();
    const info = engine.info;
    control = new SimulatorControl(info.url, info.caFile);
    drive = `/drives/${info.driveId}`;
    const host = new URL(info.url).host;
    const msal = new ConfidentialClientApplication({
      auth: {
        clientId: info.clientId,
        authority: `${info.url}/${info.tenantId}`,
        knownAuthorities: [host],
        clientCertificate: { thumbprint: info.certificateThumbprint, privateKey: fs.readFileSync(info.certificatePath, 'utf8') },
      },
      system: { networkClient: caNetworkModule(info.caFile) },
    });
    const dispatcher = new Agent({ connect: { ca: fs.readFileSync(info.caFile) } });
    client = Client.initWithMiddleware({
      baseUrl: `${info.url}/`,
      defaultVersion: 'v1.0',
      customHosts: new Set([new URL(info.url).hostname]),
      fetchOptions: { dispatcher },
      authProvider: {
        getAccessToken: async () => {
          tokenCalls++;
          const result = await msal.acquireTokenByClientCredential({ scopes: [`${info.url}/.default`] });
          return result!.accessToken;
        },
      },
    });
    folder = `fidelity-${Date.now()}`;
    await client.api(`${drive}/root/children`).post({ name: folder, folder: {}, '@microsoft.graph.conflictBehavior': 'fail' });
    await control.violations(); // reachable before anything is asserted
  });

  afterAll(async () => {
    await engine?.release();
  });

  it('uploads small files, lists them page by page with PageIterator, downloads through the 302', async () => {
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'];
    for (const name of names) {
      const item = await client.api(`${drive}/root:/${folder}/${name}:/content`).put(Buffer.from(`content of ${name}`));
      expect(item).toMatchObject({ name, size: `content of ${name}`.length, file: { mimeType: 'text/plain' } });
    }
    const first: PageCollection = await client.api(`${drive}/root:/${folder}:/children`).top(2).get();
    expect(first.value).toHaveLength(2);
    expect(first['@odata.nextLink']).toBeDefined();
    const seen: string[] = [];
    const iterator = new PageIterator(client, first, (item: { name: string }) => {
      seen.push(item.name);
      return true;
    });
    await iterator.iterate();
    expect(seen).toEqual(names);

    const mark = await control.mark();
    const stream = await client.api(`${drive}/root:/${folder}/c.txt:/content`).getStream();
    expect((await readAll(stream)).toString()).toBe('content of c.txt');
    const log = (await control.requests(mark)).requests;
    expect(log.map((r) => [r.method, r.status, r.authorization])).toEqual([
      ['GET', 302, true],
      ['GET', 200, false], // the redirect went to another host: the client dropped Authorization
    ]);
    expect(log[1].path).toMatch(/^\/_layouts\/15\/download\.aspx\?/);
  });

  it('uploads a large file with LargeFileUploadTask in 320 KiB multiples and reads it back', async () => {
    const bytes = patterned(3 * 327_680 + 12_345, 1);
    const session = await LargeFileUploadTask.createUploadSession(client, `${info().graphUrl}${drive}/root:/${folder}/large.bin:/createUploadSession`, {
      item: { '@microsoft.graph.conflictBehavior': 'fail' },
    });
    const mark = await control.mark();
    const task = new LargeFileUploadTask(client, new FileUpload(bytes, 'large.bin', bytes.length), session, { rangeSize: 327_680 });
    const result = await task.upload();
    const item = result.responseBody as { id: string; size: number; name: string };
    expect(item).toMatchObject({ name: 'large.bin', size: bytes.length });
    const puts = (await control.requests(mark)).requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.status)).toEqual([202, 202, 202, 201]);
    expect(puts.every((r) => !r.authorization)).toBe(true);
    const back = await readAll(await client.api(`${drive}/items/${item.id}/content`).getStream());
    expect(sha256(back)).toBe(sha256(bytes));
  });

  it('keeps versions: lists them newest first, serves an old one, restores it', async () => {
    const path = `${drive}/root:/${folder}/versioned.txt:`;
    for (const text of ['one', 'two', 'three']) await client.api(`${path}/content`).put(Buffer.from(text));
    const item = await client.api(path).get();
    const versions = (await client.api(`${drive}/items/${item.id}/versions`).get()).value as Array<{ id: string; size: number }>;
    expect(versions.map((v) => v.id)).toEqual(['3.0', '2.0', '1.0']);
    const old = await readAll(await client.api(`${drive}/items/${item.id}/versions/1.0/content`).getStream());
    expect(old.toString()).toBe('one');
    await client.api(`${drive}/items/${item.id}/versions/1.0/restoreVersion`).post({});
    expect((await readAll(await client.api(`${drive}/items/${item.id}/content`).getStream())).toString()).toBe('one');
    expect(((await client.api(`${drive}/items/${item.id}/versions`).get()).value as unknown[]).length).toBe(4);
  });

  it('grants, lists and removes permissions', async () => {
    const item = await client.api(`${drive}/root:/${folder}/a.txt:`).get();
    const invited = await client.api(`${drive}/items/${item.id}/invite`).post({ recipients: [{ email: 'ryan@contoso.com' }], roles: ['write'], requireSignIn: true, sendInvitation: false });
    expect(invited.value).toHaveLength(1);
    expect(invited.value[0]).toMatchObject({ roles: ['write'], grantedToV2: { user: { email: 'ryan@contoso.com' } } });
    const listed = (await client.api(`${drive}/items/${item.id}/permissions`).get()).value as Array<{ id: string; roles: string[] }>;
    expect(listed.some((p) => p.id === invited.value[0].id)).toBe(true);
    await client.api(`${drive}/items/${item.id}/permissions/${invited.value[0].id}`).delete();
    const after = (await client.api(`${drive}/items/${item.id}/permissions`).get()).value as Array<{ id: string }>;
    expect(after.some((p) => p.id === invited.value[0].id)).toBe(false);
  });

  it('answers errors in the Graph shape the client parses (code, innerError)', async () => {
    await expect(client.api(`${drive}/root:/${folder}/missing.txt:`).get()).rejects.toMatchObject({ statusCode: 404, code: 'itemNotFound' });
    await expect(client.api(`${drive}/root:/${folder}/a.txt:/content?@microsoft.graph.conflictBehavior=fail`).put(Buffer.from('x'))).rejects.toMatchObject({ statusCode: 409, code: 'nameAlreadyExists' });
  });

  it('sent only bodies that validate against the published Graph schemas', async () => {
    const report = await control.violations();
    expect(report.checked).toBeGreaterThan(15);
    expect(report.violations).toEqual([]);
    expect(tokenCalls).toBeGreaterThan(0);
  });

  it('has a schema check that does record a body outside the schemas', () => {
    const checker = new SchemaChecker();
    checker.check('microsoft.graph.driveItem', { id: 'x', name: 'n', size: 'twelve', createdDateTime: 'yesterday' }, 'GET', '/probe');
    checker.check('microsoft.graph.ODataErrors.ODataError', { error: { message: 'no code' } }, 'GET', '/probe');
    checker.check('microsoft.graph.driveItem', { id: 'x', name: 'n', size: 12 }, 'GET', '/probe');
    expect(checker.violations.map((v) => v.schema)).toEqual(['microsoft.graph.driveItem', 'microsoft.graph.ODataErrors.ODataError']);
    expect(checker.violations[0].errors.join(' ')).toMatch(/size/);
  });

  function info() {
    return engine.info;
  }
});
