import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { NGINX_CONF, startNginx, type NginxHandle } from '../engines/nginx';
import { listen } from '../support/files';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { REPO_ROOT } from '../support/process';
import { rawRequest } from '../support/proxy';

const run = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'scripts/nginx-offload.js');
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** scripts/nginx-offload.js run as an operator runs it: the gateway's environment, its output on stdout. */
async function generate(env: Record<string, string>, args: string[] = []): Promise<string> {
  const { stdout } = await run(process.execPath, [SCRIPT, ...args], { env: { PATH: process.env.PATH, ...env } });
  return stdout;
}

/** location blocks as { location: normalized body lines }, comments and harness markers left out. */
function locations(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of text.matchAll(/^\s*location (\S+) \{([^}]*)\}/gm)) {
    out[m[1]] = m[2]
      .split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .filter(Boolean);
  }
  return out;
}

/** Issue 39: the offload's internal locations come from the gateway configuration, not by hand. */
describe('scripts/nginx-offload.js: offload locations from the configuration', () => {
  let folder: string;
  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'nginx-offload-'));
  });
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('prints one location per filesystem connector and the user files, none for other kinds', async () => {
    const config = path.join(folder, 'sample.yaml');
    fs.writeFileSync(
      config,
      [
        'connectors:',
        '  - { id: fs, typeId: filesystem, params: { root: "${GATEWAY_DATA_DIR}/repository" } }',
        '  - { id: team-docs, typeId: filesystem, params: { root: /srv/team docs } }',
        '  - { id: cmis, typeId: cmis, params: { url: "http://cmis.example/browser", repositoryId: A1, user: u, password: p } }',
        '',
      ].join('\n'),
    );
    const out = await generate({ GATEWAY_CONFIG: config, GATEWAY_DATA_DIR: '/var/lib/gateway', GATEWAY_ACCEL_REDIRECT: '/_offload' });
    const found = locations(out);
    expect(Object.keys(found).sort()).toEqual(['/_offload/files/', '/_offload/repo/fs/', '/_offload/repo/team-docs/']);
    expect(found['/_offload/repo/fs/']).toContain('alias /var/lib/gateway/repository/;');
    expect(found['/_offload/repo/team-docs/']).toContain('alias "/srv/team docs/";');
    expect(found['/_offload/files/']).toContain('alias /var/lib/gateway/user-files/;');
    for (const body of Object.values(found)) expect(body).toEqual(expect.arrayContaining(['internal;', 'disable_symlinks on from=$document_root;']));

    // Another container's view of the same folders, and a prefix given when the environment lacks it.
    const mapped = locations(await generate({ GATEWAY_CONFIG: config, GATEWAY_DATA_DIR: '/var/lib/gateway' }, ['--prefix', '/_dl', '--map', '/var/lib/gateway=/data']));
    expect(mapped['/_dl/repo/fs/']).toContain('alias /data/repository/;');
    expect(mapped['/_dl/repo/team-docs/']).toContain('alias "/srv/team docs/";');

    await expect(generate({ GATEWAY_CONFIG: config, GATEWAY_DATA_DIR: '/var/lib/gateway' })).rejects.toThrow(/GATEWAY_ACCEL_REDIRECT/);
  });

  it("for compose's configuration (docker/gateway.yaml) it prints the locations docker/nginx.conf ships", async () => {
    const out = await generate({ GATEWAY_CONFIG: path.join(REPO_ROOT, 'docker/gateway.yaml'), GATEWAY_DATA_DIR: '/data', GATEWAY_ACCEL_REDIRECT: '/_offload' });
    const shipped = fs.readFileSync(NGINX_CONF, 'utf8');
    const block = shipped.slice(shipped.indexOf('# offload:begin'), shipped.indexOf('# offload:end'));
    expect(locations(out)).toEqual(locations(block));
  });

  describe('the generated block in nginx serves an offloaded download of a second filesystem connector', () => {
    let gw: TestGateway;
    let nginx: NginxHandle;
    let direct: string;
    const content = randomBytes(150_000);

    beforeAll(async () => {
      const teamRoot = path.join(folder, 'team root');
      fs.mkdirSync(path.join(teamRoot, 'plans'), { recursive: true });
      fs.writeFileSync(path.join(teamRoot, 'plans', 'q3.bin'), content);
      const config = path.join(folder, 'gateway.yaml');
      fs.writeFileSync(
        config,
        `connectors:\n  - { id: fs, typeId: filesystem, params: { root: "\${GATEWAY_DATA_DIR}/repository" } }\n  - { id: team, typeId: filesystem, params: { root: "${teamRoot}" } }\n`,
      );
      const env = { GATEWAY_CONFIG: config, GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1', GATEWAY_ACCEL_REDIRECT: '/_offload' };
      gw = await startGateway({ env });
      direct = await listen(gw);
      const offloadBlock = await generate({ GATEWAY_CONFIG: config, GATEWAY_DATA_DIR: gw.dataDir, GATEWAY_ACCEL_REDIRECT: '/_offload' });
      nginx = await startNginx({ upstreams: [{ port: Number(new URL(direct).port) }], offloadBlock });
    });
    afterAll(async () => {
      await nginx?.stop();
      await gw?.close();
    });

    it('the gateway hands the download off, nginx sends the bytes from the generated location', async () => {
      const found = await gw.http().get(`${gw.api}/repo/team/idbypath`).query({ folderPath: '/plans', fileName: 'q3.bin' }).set('Authorization', adminAuth()).expect(200);
      const file = `/gateway/api/repo/team/file?id=${encodeURIComponent(found.body.results.id as string)}`;
      const handedOff = await rawRequest(`${direct}${file}`, { headers: { Authorization: adminAuth() } });
      expect([handedOff.status, handedOff.headers['x-accel-redirect'], handedOff.body.length]).toEqual([200, '/_offload/repo/team/plans/q3.bin', 0]);

      const res = await rawRequest(`${nginx.url}${file}`, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(200);
      expect(sha256(res.body)).toBe(sha256(content));
      expect(res.headers.etag).toBe(handedOff.headers.etag);
      const part = await rawRequest(`${nginx.url}${file}`, { headers: { Authorization: adminAuth(), Range: 'bytes=100-199' } });
      expect(part.status).toBe(206);
      expect(part.body.equals(content.subarray(100, 200))).toBe(true);
    });
  });
});
