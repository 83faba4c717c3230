import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { RecordDatabase } from './record-database';
import { DirectCopyThread, directCopyScript, type WorkerScript } from './direct-copy-thread';
import type { DirectCopyRequest } from './direct-copy';

const request = (n: number): DirectCopyRequest => ({
  source: `/src/${n}`,
  sourceFolders: [],
  into: { path: '/dst', parents: [], rel: '', records: { database: '/dst/.gateway/metadata.db', key: 'k' } },
  name: String(n),
  staged: `/dst/.gateway/tmp/${n}`,
  cloneMode: 0,
  maxBytes: 1,
});

/** A stand-in thread that answers each request with the size of the batch it came in (as `code`). */
const batchSizes: WorkerScript = {
  start: () =>
    new Worker(
      `const { parentPort } = require('node:worker_threads');
       let answers;
       parentPort.on('message', (batch) => Array.isArray(batch) ? answers.postMessage(batch.map(([id]) => [id, { step: 'target', code: String(batch.length) }])) : (answers = batch.answers));`,
      { eval: true },
    ),
};

describe('DirectCopyThread', () => {
  it('sends the requests of one turn as one message and answers each its own result', async () => {
    const thread = new DirectCopyThread(batchSizes);
    const first = await Promise.all([thread.copy(request(1)), thread.copy(request(2)), thread.copy(request(3))]);
    expect(first).toEqual([1, 2, 3].map(() => ({ step: 'target', code: '3' })));
    expect(await thread.copy(request(4))).toEqual({ step: 'target', code: '1' });
  });

  it('answers `lost` for the copies a thread had when it died, and starts a new thread for the next', async () => {
    let started = 0;
    const dying: WorkerScript = {
      start: () => {
        started++;
        return new Worker(`require('node:worker_threads').parentPort.on('message', () => process.exit(3));`, { eval: true });
      },
    };
    const thread = new DirectCopyThread(dying);
    expect(await Promise.all([thread.copy(request(1)), thread.copy(request(2))])).toEqual([{ step: 'lost' }, { step: 'lost' }]);
    expect(await thread.copy(request(3))).toEqual({ step: 'lost' });
    expect(started).toBe(2);
  });

  it('copies through the real thread script (a source that is not there: the errno of its lstat)', async () => {
    const thread = new DirectCopyThread(directCopyScript);
    expect(await thread.copy(request(1))).toEqual({ step: 'source', code: 'ENOENT' });
  });

  it('answers a real copy once the records thread committed its record, and writes again after forget()', async () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'copy-thread-')));
    try {
      mkdirSync(path.join(dir, 'src'));
      mkdirSync(path.join(dir, 'dst', '.gateway', 'tmp'), { recursive: true });
      const database = path.join(dir, 'dst', '.gateway', 'metadata.db');
      new RecordDatabase(database).close();
      const into = { path: path.join(dir, 'dst'), parents: [], rel: '', records: { database, key: 'k1' } };
      const copy = (name: string): DirectCopyRequest => {
        writeFileSync(path.join(dir, 'src', name), name);
        return {
          source: path.join(dir, 'src', name),
          sourceFolders: [],
          into,
          name,
          staged: path.join(dir, 'dst', '.gateway', 'tmp', name),
          cloneMode: 0,
          maxBytes: 1024,
          record: { createdBy: 'bob' },
        };
      };
      const recorded = () => {
        const db = new BetterSqlite3(database, { readonly: true });
        try {
          return db.prepare<[], { name: string; record: string }>('SELECT name, record FROM documents ORDER BY name').all().map((r) => [r.name, JSON.parse(r.record).createdBy]);
        } finally {
          db.close();
        }
      };
      const thread = new DirectCopyThread(directCopyScript);
      // Each answered with the SHA-256 of the bytes the thread copied (the copy job's checksum).
      const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
      expect(await Promise.all([thread.copy(copy('a')), thread.copy(copy('b'))])).toMatchObject([
        { step: 'copied', sha256: sha256('a') },
        { step: 'copied', sha256: sha256('b') },
      ]);
      expect(recorded()).toEqual([
        ['a', 'bob'],
        ['b', 'bob'],
      ]);
      expect(readFileSync(path.join(dir, 'dst', 'b'), 'utf8')).toBe('b');
      // Both threads close their connection (in order after the copies sent before); the next copy opens them again.
      thread.forget('k1');
      expect(await thread.copy(copy('c'))).toMatchObject({ step: 'copied', sha256: sha256('c') });
      expect(recorded().map(([name]) => name)).toEqual(['a', 'b', 'c']);
      // A name with a record and a file is refused by the look-up before any copy.
      expect(await thread.copy(copy('a'))).toEqual({ step: 'exists' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
