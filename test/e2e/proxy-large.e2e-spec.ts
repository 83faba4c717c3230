import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { ADMIN, basic } from '../support/gateway';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { multipartFile, rawRequest } from '../support/proxy';

const MiB = 1024 * 1024;
const SIZE = 2048 * MiB;
/** Growth of resident memory allowed during a 2 GiB transfer: anything that held the body would need 2048 MB. */
const GATEWAY_BOUND_MB = 160;
const NGINX_BOUND_MB = 64;

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(status.match(/^VmRSS:\s+(\d+) kB/m)![1]) * 1024;
}

/** Peak resident memory of the gateway and of nginx (master and workers) while `work` runs, sampled every 100 ms. */
async function peaks<T>(gatewayPid: number, nginx: NginxHandle, work: () => Promise<T>): Promise<{ result: T; gateway: number; nginx: number }> {
  let gateway = rssOf(gatewayPid);
  let proxy = nginx.rss();
  const timer = setInterval(() => {
    gateway = Math.max(gateway, rssOf(gatewayPid));
    proxy = Math.max(proxy, nginx.rss());
  }, 100);
  try {
    const result = await work();
    return { result, gateway: Math.max(gateway, rssOf(gatewayPid)), nginx: Math.max(proxy, nginx.rss()) };
  } finally {
    clearInterval(timer);
  }
}

/** 2 GiB of varied bytes, generated as they are read (one 1 MiB block, each copy stamped with its index), and their SHA-256. */
function generated(size: number): { stream: Readable; digest: () => string } {
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  let sent = 0;
  const stream = new Readable({
    read() {
      if (sent >= size) return void this.push(null);
      const chunk = Buffer.from(block.subarray(0, Math.min(MiB, size - sent)));
      chunk.writeUInt32BE(sent / MiB, 0);
      sent += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, digest: () => hash.digest('hex') };
}

/**
 * A 2 GiB upload and download through nginx (docker/nginx.conf) to the built gateway, a process of
 * its own so its memory is its own: both stay flat (bounds in MB, never a time).
 */
describe('2 GiB through nginx: gateway and nginx memory stay flat', () => {
  let gateway: GatewayProcess;
  let nginx: NginxHandle;
  let dataDir: string;
  let auth: string;

  beforeAll(async () => {
    ensureBuilt();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-large-'));
    gateway = await spawnGateway({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_USER: ADMIN.username,
      GATEWAY_ADMIN_PASSWORD: ADMIN.password,
      GATEWAY_CONTEXT_PATH: '/gateway',
      TRUST_PROXY: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    nginx = await startNginx({ upstreams: [{ port: gateway.port }] });
    auth = basic(ADMIN.username, ADMIN.password);
  }, 300_000);
  afterAll(async () => {
    await nginx?.stop();
    await gateway?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('uploads and downloads 2 GiB byte-exact', async () => {
    const root = await rawRequest(`${nginx.url}/gateway/api/repo/fs/rootfolderid`, { headers: { Authorization: auth } });
    const rootId = JSON.parse(root.body.toString()).results.folderId;
    // Warm both up (connections, code paths) so the baseline is the idle working set.
    for (let i = 0; i < 3; i++) await rawRequest(`${nginx.url}/gateway/api/repo/connections`, { headers: { Authorization: auth } });
    const baseGateway = rssOf(gateway.child.pid!);
    const baseNginx = nginx.rss();

    const source = generated(SIZE);
    const form = multipartFile('two-gib.bin', source.stream);
    const up = await peaks(gateway.child.pid!, nginx, () =>
      rawRequest(`${nginx.url}/gateway/api/repo/fs/file?folderId=${encodeURIComponent(rootId)}`, { method: 'POST', headers: { ...form.headers, Authorization: auth }, body: form.body }),
    );
    expect(up.result.status).toBe(201);
    const id = JSON.parse(up.result.body.toString()).results.id;
    expect(fs.statSync(path.join(dataDir, 'repository', 'two-gib.bin')).size).toBe(SIZE);

    const down = await peaks(gateway.child.pid!, nginx, () =>
      new Promise<{ status: number; size: number; digest: string }>((resolve, reject) => {
        http
          .get(`${nginx.url}/gateway/api/repo/fs/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: auth } }, (res) => {
            const hash = createHash('sha256');
            let size = 0;
            res.on('data', (c: Buffer) => {
              size += c.length;
              hash.update(c);
            });
            res.on('end', () => resolve({ status: res.statusCode!, size, digest: hash.digest('hex') }));
            res.on('error', reject);
          })
          .on('error', reject);
      }),
    );
    expect(down.result).toEqual({ status: 200, size: SIZE, digest: source.digest() });

    const mb = (n: number) => Math.round(n / MiB);
    const growth = {
      gatewayUpload: mb(up.gateway - baseGateway),
      gatewayDownload: mb(down.gateway - baseGateway),
      nginxUpload: mb(up.nginx - baseNginx),
      nginxDownload: mb(down.nginx - baseNginx),
    };
    process.stderr.write(`[proxy-large] RSS growth in MB over the idle baseline: ${JSON.stringify(growth)}\n`);
    expect(growth.gatewayUpload).toBeLessThanOrEqual(GATEWAY_BOUND_MB);
    expect(growth.gatewayDownload).toBeLessThanOrEqual(GATEWAY_BOUND_MB);
    expect(growth.nginxUpload).toBeLessThanOrEqual(NGINX_BOUND_MB);
    expect(growth.nginxDownload).toBeLessThanOrEqual(NGINX_BOUND_MB);
  }, 900_000);
});
