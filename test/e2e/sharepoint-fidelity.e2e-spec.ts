import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SharePointSetup, useSharePointEngine, type SharePointEngine } from '../contract/fixtures/sharepoint-engine';

/**
 * Fidelity of the SharePoint simulator, checked with code no one here wrote: PnPjs (@pnp/sp) lists,
 * uploads small and chunked (its own StartUpload/ContinueUpload/FinishUpload), downloads, reads
 * versions and sets permissions; and the simulator's verbose and light payloads have the keys and
 * JSON types of Microsoft's documented examples (/work/shared/reference/sharepoint-graph/examples,
 * copied to test/e2e/fixtures/sharepoint-examples).
 */
const EXAMPLES = path.join(__dirname, 'fixtures', 'sharepoint-examples');
const example = (name: string) => JSON.parse(fs.readFileSync(path.join(EXAMPLES, name), 'utf8'));

/** Every key of `expected` is in `actual` with the same JSON type (recursively for objects). */
function sameShape(expected: unknown, actual: unknown, at = '$', skip: string[] = []): string[] {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (kind(expected) !== kind(actual)) return [`${at}: ${kind(expected)} expected, got ${kind(actual)}`];
  if (kind(expected) !== 'object') return [];
  const problems: string[] = [];
  for (const [k, v] of Object.entries(expected as Record<string, unknown>)) {
    if (skip.includes(k)) continue;
    if (!(k in (actual as Record<string, unknown>))) problems.push(`${at}.${k}: missing`);
    else if (k !== 'results' && k !== '__deferred') problems.push(...sameShape(v, (actual as Record<string, unknown>)[k], `${at}.${k}`, skip));
  }
  return problems;
}

describe('SharePoint simulator fidelity', () => {
  let engine: SharePointEngine;
  let setup: SharePointSetup;
  let folder: { path: string; serverPath: string };

  beforeAll(async () => {
    engine = await useSharePointEngine();
    setup = new SharePointSetup(engine.info);
    folder = await setup.createTestFolder('fidelity');
  });
  afterAll(async () => {
    setup?.close();
    await engine?.release();
  });

  it('serves PnPjs: list, small and chunked upload, download, versions, permissions', async () => {
    const token = await (setup.http as unknown as { options: { tokens: { getToken(): Promise<string> } } }).options.tokens.getToken();
    const input = JSON.stringify({ siteUrl: engine.info.siteUrl, token, folder: folder.serverPath });
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [path.join(__dirname, 'sharepoint-pnp-client.mjs'), input], { env: { ...process.env, NODE_EXTRA_CA_CERTS: engine.info.caFile }, timeout: 120_000 }, (err, out, errOut) =>
        err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out),
      ),
    );
    const got = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(got.error).toBeUndefined();
    expect(got.web).toEqual({ Title: 'Gateway', ServerRelativeUrl: new URL(engine.info.siteUrl).pathname });
    expect(got.list).toEqual({ Title: 'Documents', EntityTypeName: 'Shared_x0020_Documents' });
    expect(got.small).toEqual({ Name: 'pnp-small.txt', Length: '16', UIVersionLabel: '1.0' });
    expect(got.chunked).toEqual({ Name: 'pnp-chunked.bin', Length: String(2 * 1024 * 1024 + 333) });
    expect(got.listing).toEqual([
      { Name: 'pnp-chunked.bin', Length: String(2 * 1024 * 1024 + 333) },
      { Name: 'pnp-small.txt', Length: '14' },
    ]);
    expect(got.text).toBe('second version');
    expect(got.chunkedMatches).toBe(true);
    expect(got.versions).toEqual([{ ID: 512, VersionLabel: '1.0', Size: 16, Url: `_vti_history/512/Shared Documents${folder.path}/pnp-small.txt` }]);
    expect(got.permissions).toEqual(expect.arrayContaining([{ login: 'i:0#.f|membership|carol@contoso.com', roles: ['Read'] }]));
    expect(got.afterRemove).not.toContain('i:0#.f|membership|carol@contoso.com');
  });

  it('answers in the verbose and light shapes of the documented examples', async () => {
    await setup.http.request({
      method: 'POST',
      url: `${setup.api}/web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl='shape.docx',overwrite=true)?@f=${encodeURIComponent(`'${folder.serverPath}'`)}`,
      body: 'shape',
    });
    await setup.http.request({
      method: 'POST',
      url: `${setup.api}/web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl='shape.docx',overwrite=true)?@f=${encodeURIComponent(`'${folder.serverPath}'`)}`,
      body: 'shape v2',
    });
    const file = `web/GetFileByServerRelativePath(decodedurl=@p)`;
    const q = `@p=${encodeURIComponent(`'${folder.serverPath}/shape.docx'`)}`;
    const get = async (p: string, format: string) =>
      (await setup.http.json({ method: 'GET', url: `${setup.api}/${p}${p.includes('?') ? '&' : '?'}${q}`, headers: { accept: `application/json;odata=${format}` } })).data;

    // Values the examples fix but the simulator cannot share (dates, GUIDs) are compared by type only.
    // Title: the 2013 docs example shows "", SharePoint Online answers null for a file without a title (as the nometadata example).
    expect(sameShape(example('sp-file--verbose.json'), await get(file, 'verbose'), '$', ['Title'])).toEqual([]);
    expect(sameShape(example('sp-file--nometadata-reconstructed.json'), await get(file, 'nometadata'))).toEqual([]);
    expect(sameShape(example('sp-folder--verbose.json'), await get(`web/GetFolderByServerRelativePath(decodedurl=@f)?@f=${encodeURIComponent(`'${folder.serverPath}'`)}`, 'verbose'))).toEqual([]);
    expect(sameShape(example('sp-fileversion--verbose.json'), await get(`${file}/Versions(512)`, 'verbose'), '$', ['IsCurrentVersion'])).toEqual([]);
    const versions = (await get(`${file}/Versions`, 'nometadata')) as { value: unknown[] };
    expect(sameShape(example('sp-fileversions--nometadata-cli-m365.json').value[0], versions.value[0])).toEqual([]);
    // List items: the example's own columns (Predecessors, AssignedTo) belong to a tasks list; the rest must be there.
    expect(sameShape(example('sp-listitem--verbose.json'), await get(`${file}/ListItemAllFields`, 'verbose'), '$', ['PredecessorsId', 'AssignedToId', 'Title'])).toEqual([]);
    const digest = (await setup.http.json({ method: 'POST', url: `${setup.api}/contextinfo`, headers: { accept: 'application/json;odata=verbose' } })).data;
    expect(sameShape(example('sp-contextinfo--verbose.json'), digest)).toEqual([]);

    // Errors in both formats.
    const missing = async (format: string) =>
      (await setup.http.request({ method: 'GET', url: `${setup.api}/web/GetFileByServerRelativePath(decodedurl='/nope.txt')`, headers: { accept: `application/json;odata=${format}` }, accept: [404] })).body;
    const { readText } = await import('@gateway/microsoft-client');
    expect(sameShape(example('sp-error--verbose-404.json'), JSON.parse(await readText(await missing('verbose'), 1 << 16)))).toEqual([]);
    expect(sameShape(example('sp-error--jsonlight.json'), JSON.parse(await readText(await missing('minimalmetadata'), 1 << 16)))).toEqual([]);
  });
});
