import { Worker } from 'node:worker_threads';
import { DirectCopyThread, directCopyScript, type WorkerScript } from './direct-copy-thread';
import type { DirectCopyRequest } from './direct-copy';

const request = (n: number): DirectCopyRequest => ({
  source: `/src/${n}`,
  sourceFolders: [],
  targetFolder: '/dst',
  targetFolderParents: [],
  target: `/dst/${n}`,
  staged: `/dst/.gateway/tmp/${n}`,
  cloneMode: 0,
  maxBytes: 1,
});

/** A stand-in thread that answers each request with the size of the batch it came in (as `code`). */
const batchSizes: WorkerScript = {
  start: () =>
    new Worker(
      `const { parentPort } = require('node:worker_threads');
       parentPort.on('message', (batch) => parentPort.postMessage(batch.map(([id]) => [id, { step: 'target', code: String(batch.length) }])));`,
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
});
