import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { DirectCopyRequest } from './direct-copy';
import type { WorkerScript } from './direct-copy-thread';
import { LargeCopyThreads } from './large-copy-threads';

const request = (n: number): DirectCopyRequest => ({
  source: `/src/${n}`,
  sourceFolders: [],
  into: { path: '/dst', parents: [], rel: '', records: { database: '/dst/.gateway/metadata.db', key: 'k' } },
  name: String(n),
  staged: `/dst/.gateway/tmp/${n}`,
  cloneMode: 0,
  maxBytes: Number.POSITIVE_INFINITY,
  chunked: true,
});

/**
 * Stand-in threads that hold each request until told (`release` with its source), then answer it with
 * the thread's number as `code`; each says what it was given on a port of the test's own (`seen`).
 */
function heldThreads(): { script: WorkerScript; started: () => number; seen: string[]; release: (source: string) => void } {
  const ports: MessagePort[] = [];
  const seen: string[] = [];
  const script: WorkerScript = {
    start: () => {
      const { port1: mine, port2: theirs } = new MessageChannel();
      mine.on('message', (source: string) => seen.push(source));
      mine.unref();
      const thread = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         let held;
         workerData.port.on('message', (source) => {
           if (held && held.source === source) { parentPort.postMessage({ step: 'target', code: String(workerData.n) }); held = undefined; }
         });
         workerData.port.unref();
         parentPort.on('message', (m) => { held = m; workerData.port.postMessage(m.source); });`,
        { eval: true, workerData: { n: ports.length, port: theirs }, transferList: [theirs] },
      );
      ports.push(mine);
      return thread;
    },
  };
  return { script, started: () => ports.length, seen, release: (source) => ports.forEach((port) => port.postMessage(source)) };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 5));
};

describe('LargeCopyThreads', () => {
  it('gives each thread one copy at a time, at most `size` threads, the rest queued in order', async () => {
    const held = heldThreads();
    const threads = new LargeCopyThreads(held.script, 2);
    const copies = [1, 2, 3].map((n) => threads.copy(request(n)));
    await until(() => held.seen.length === 2);
    expect([...held.seen].sort()).toEqual(['/src/1', '/src/2']);
    held.release('/src/2');
    expect(await copies[1]).toEqual({ step: 'target', code: '1' });
    await until(() => held.seen.length === 3);
    expect(held.seen[2]).toBe('/src/3');
    held.release('/src/1');
    held.release('/src/3');
    expect(await Promise.all(copies)).toEqual([
      { step: 'target', code: '0' },
      { step: 'target', code: '1' },
      { step: 'target', code: '1' },
    ]);
    expect(held.started()).toBe(2);
  });

  it('a queued copy whose signal aborts leaves the queue with its reason and is never sent; one under way completes', async () => {
    const held = heldThreads();
    const threads = new LargeCopyThreads(held.script, 1);
    const halt = new AbortController();
    const underWay = threads.copy(request(1), halt.signal);
    const queued = threads.copy(request(2), halt.signal);
    await until(() => held.seen.length === 1);
    const reason = new Error('halted');
    halt.abort(reason);
    await expect(queued).rejects.toBe(reason);
    held.release('/src/1');
    expect(await underWay).toEqual({ step: 'target', code: '0' });
    await expect(threads.copy(request(3), halt.signal)).rejects.toBe(reason);
    expect(held.seen).toEqual(['/src/1']);
  });

  it('answers `lost` for the copy of a thread that died, and starts another for the next', async () => {
    let started = 0;
    const dying: WorkerScript = {
      start: () => {
        started++;
        return new Worker(`require('node:worker_threads').parentPort.on('message', () => process.exit(3));`, { eval: true });
      },
    };
    const threads = new LargeCopyThreads(dying, 1);
    expect(await Promise.all([threads.copy(request(1)), threads.copy(request(2))])).toEqual([{ step: 'lost' }, { step: 'lost' }]);
    expect(started).toBe(2);
  });

  it('copies through the real thread script: a source of several chunks, whole, its SHA-256, nothing staged left', async () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'large-copy-')));
    try {
      mkdirSync(path.join(dir, 'src'));
      mkdirSync(path.join(dir, 'dst', '.gateway', 'tmp'), { recursive: true });
      const bytes = Buffer.alloc(5 * 256 * 1024 + 99);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i ^ (i >> 11)) & 0xff;
      writeFileSync(path.join(dir, 'src', 'big.bin'), bytes);
      const result = await new LargeCopyThreads().copy({
        ...request(0),
        source: path.join(dir, 'src', 'big.bin'),
        sourceFolders: [],
        into: { ...request(0).into, path: path.join(dir, 'dst') },
        name: 'big.bin',
        staged: path.join(dir, 'dst', '.gateway', 'tmp', 'staged'),
      });
      expect(result).toMatchObject({ step: 'copied', sha256: createHash('sha256').update(bytes).digest('hex'), stat: { size: BigInt(bytes.length) } });
      expect(readFileSync(path.join(dir, 'dst', 'big.bin')).equals(bytes)).toBe(true);
      expect(readdirSync(path.join(dir, 'dst', '.gateway', 'tmp'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
