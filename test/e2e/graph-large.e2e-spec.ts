/**
 * A large document up and down through the Graph connector of a spawned gateway (the built main.js),
 * with the gateway's resident memory read from /proc/<gateway pid>/status every 50 ms the whole time.
 * Asserted: the bound, the gateway's RSS under 256 MB (decimal: 244.1 MiB) at every sample,
 * uploading and downloading, and the bytes back equal to the bytes sent. Content streams (the upload
 * is spooled to disk for the upload session, never held — holding it would add the whole document).
 * Size: GRAPH_LARGE_MIB, default 128 (CI); the run is
 *   GRAPH_LARGE_MIB=1024 npx jest --config jest.config.js --selectProjects e2e --runInBand test/e2e/graph-large
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { basic } from '../support/gateway';
import { ensureBuilt, spawnGateway, type GatewayProcess } from '../support/process';
import { GraphSetup, useGraphEngine, type GraphEngine } from '../contract/fixtures/graph-engine';

const MIB = 1024 * 1024;
const SIZE = Number(process.env.GRAPH_LARGE_MIB || '128') * MIB;
const PASSWORD = 'large-admin-pw-1';
/** Issue 37's bound: 256 MB (without forced collections; docs/decisions/0017-memory-without-forced-gc.md). */
const RSS_LIMIT = 256_000_000;

function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status);
  return kb ? Number(kb[1]) * 1024 : 0;
}

/** Deterministic bytes, generated chunk by chunk (the test holds no more than one chunk either). */
function chunkAt(index: number): Buffer {
  const chunk = Buffer.alloc(MIB);
  for (let i = 0; i < MIB; i += 4) chunk.writeUInt32LE((index * 2654435761 + i * 40503) >>> 0, i);
  return chunk;
}

describe(`Graph connector: ${SIZE / MIB} MiB through a spawned gateway in flat memory`, () => {
  let engine: GraphEngine;
  let gw: GatewayProcess;
  let dataDir: string;
  let folderId: string;
  let peak = 0;
  let startRss = 0;
  let sampler: NodeJS.Timeout;

  beforeAll(async () => {
    ensureBuilt();
    engine = await useGraphEngine();
    folderId = await new GraphSetup(engine.info).createFolder(`large-${Date.now()}`);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-graph-large-'));
    const config = path.join(dataDir, 'gateway.yaml');
    fs.writeFileSync(config, `connectors:\n  - ${JSON.stringify({ id: 'graph', typeId: 'graph', description: 'Graph simulator', params: engine.info.connectorParams })}\n`);
    gw = await spawnGateway({ GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: config, GATEWAY_ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' });
    startRss = rssOf(gw.child.pid!);
    sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssOf(gw.child.pid!));
      } catch {
        // exited
      }
    }, 50);
  }, 300_000);

  afterAll(async () => {
    clearInterval(sampler);
    await gw?.stop();
    await engine?.release();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('uploads and downloads it byte for byte with the gateway under 256 MB RSS', async () => {
    const url = new URL(`${gw.baseUrl}/api/repo/graph/file`);
    url.searchParams.set('folderId', folderId);
    url.searchParams.set('fileName', 'large.bin');
    const boundary = 'graphlargeboundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const sent = createHash('sha256');
    const created = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(url, {
        method: 'POST',
        headers: { authorization: basic('admin', PASSWORD), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + SIZE + tail.length },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      let index = 0;
      const writeMore = () => {
        while (index < SIZE / MIB) {
          const chunk = chunkAt(index++);
          sent.update(chunk);
          if (!req.write(chunk)) return void req.once('drain', writeMore);
        }
        req.end(tail);
      };
      req.write(head);
      writeMore();
    });
    expect(created.status).toBe(201);
    const uploadPeak = Math.max(peak, rssOf(gw.child.pid!));
    peak = 0;
    const id = (JSON.parse(created.body) as { results: { id: string } }).results.id;

    const received = createHash('sha256');
    let length = 0;
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(`${gw.baseUrl}/api/repo/graph/file?id=${encodeURIComponent(id)}`, { headers: { authorization: basic('admin', PASSWORD) } }, (res) => {
          res.on('data', (d: Buffer) => {
            length += d.length;
            received.update(d);
          });
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
    expect(length).toBe(SIZE);
    expect(received.digest('hex')).toBe(sent.digest('hex'));
    peak = Math.max(peak, rssOf(gw.child.pid!));
    const mib = (n: number) => `${(n / MIB).toFixed(1)} MiB`;
    process.stderr.write(`[graph-large] ${SIZE / MIB} MiB up and down; gateway RSS at start ${mib(startRss)}, peak ${mib(uploadPeak)} uploading, ${mib(peak)} downloading (limit ${mib(RSS_LIMIT)})\n`);
    expect(uploadPeak).toBeLessThan(RSS_LIMIT);
    expect(peak).toBeLessThan(RSS_LIMIT);
    // Nothing left in the spool folder.
    expect(fs.existsSync(path.join(dataDir, 'graph-spool')) ? fs.readdirSync(path.join(dataDir, 'graph-spool')) : []).toEqual([]);
  }, 600_000);
});
