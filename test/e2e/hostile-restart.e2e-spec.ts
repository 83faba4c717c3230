import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADMIN, basic } from '../support/gateway';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';

/**
 * Issue 16, defect 9: a gateway killed (-9) in the middle of a 100 MB upload leaves its partial file in
 * the filesystem connector's temp folder; the restart must remove it, not wait an hour.
 */
describe('Restart after a kill -9 mid-upload (issue 16)', () => {
  let dataDir: string;
  let gateway: GatewayProcess | undefined;
  const env = () => ({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_USER: ADMIN.username,
    GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'silent',
    GATEWAY_SWEEP_INTERVAL_SECONDS: '0',
  });
  const tmpDir = () => path.join(dataDir, 'repository', '.gateway', 'tmp');
  const tempFiles = () => fs.readdirSync(tmpDir());

  /** A multipart upload of `megabytes` MiB to the repository root, sent a MiB at a time on demand. */
  const startUpload = (baseUrl: string, fileName: string, megabytes: number) => {
    const boundary = 'hostile-restart-boundary';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const req = http.request(`${baseUrl}/api/repo/fs/file?folderId=fs-`, {
      method: 'POST',
      headers: {
        Authorization: basic(ADMIN.username, ADMIN.password),
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': String(head.length + megabytes * chunk.length + tail.length),
      },
    });
    req.on('error', () => undefined); // the server may die under it
    req.write(head);
    let sent = 0;
    return {
      req,
      send: async (n: number) => {
        for (let i = 0; i < n && sent < megabytes; i++, sent++) if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
      },
      finish: async () => {
        const answer = new Promise<number>((resolve) => req.once('response', (res) => (res.resume(), resolve(res.statusCode ?? 0))));
        while (sent < megabytes) {
          if (!req.write(chunk)) await new Promise((r) => req.once('drain', r));
          sent++;
        }
        req.end(tail);
        return answer;
      },
    };
  };
  const partialOnDisk = async () => {
    const deadline = Date.now() + 30_000;
    while (!tempFiles().some((n) => fs.statSync(path.join(tmpDir(), n)).size > 0)) {
      if (Date.now() > deadline) throw new Error('no partial upload appeared in the temp folder');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(() => ensureBuilt(), 180_000);
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-hostile-restart-'));
  });
  afterEach(async () => {
    await gateway?.stop('SIGKILL');
    gateway = undefined;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('removes the partial upload a killed process left behind', async () => {
    gateway = await spawnGateway(env());
    const upload = startUpload(gateway.baseUrl, 'big.bin', 100);
    await upload.send(33);
    await partialOnDisk();
    expect(tempFiles().length).toBeGreaterThan(0);

    await gateway.stop('SIGKILL');
    upload.req.destroy();
    expect(tempFiles().length).toBeGreaterThan(0); // still there: nobody cleaned up after the kill

    gateway = await spawnGateway(env());
    expect(tempFiles()).toEqual([]);
    // Nothing half-written became visible either.
    const res = await fetch(`${gateway.baseUrl}/api/repo/fs/folderitems?id=fs-`, { headers: { Authorization: basic(ADMIN.username, ADMIN.password) } });
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).not.toContain('big.bin');
  }, 120_000);

  it('keeps the temp files of a live process sharing the repository', async () => {
    gateway = await spawnGateway(env());
    // A second process on the same data: its start-up sweep must not remove the first one's upload.
    const upload = startUpload(gateway.baseUrl, 'live.bin', 50);
    await upload.send(10);
    await partialOnDisk();
    const before = tempFiles();
    const second = await spawnGateway(env());
    try {
      expect(tempFiles()).toEqual(expect.arrayContaining(before));
    } finally {
      await second.stop('SIGKILL');
    }
    // The first process finishes its upload afterwards.
    expect(await upload.finish()).toBe(201);
  }, 120_000);
});
