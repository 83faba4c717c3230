import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { CopyGuard } from './document-copier';
import { CountedReads } from './counted-reads';

function runGuard(): CopyGuard & { tracked: Readable[] } {
  const tracked: Readable[] = [];
  return { cancelled: false, tracked, track: (s: Readable) => (tracked.push(s), s) };
}

const sink = () =>
  new Writable({
    write(_chunk: Buffer, _encoding, done) {
      done();
    },
  });

describe('CountedReads', () => {
  it('counts the bytes of every stream the copy reads, and hands the run each source stream to track', async () => {
    const run = runGuard();
    const reads = new CountedReads(run);
    await pipeline(reads.track(Readable.from([Buffer.alloc(1000), Buffer.from('héllo')])), sink());
    await pipeline(reads.track(Readable.from([Buffer.alloc(24)])), sink());
    expect(reads.bytes).toBe(1000 + 6 + 24);
    expect(run.tracked).toHaveLength(2);
  });

  it('a cut source (kill) fails the stream the target reads; a target that gives up destroys the source', async () => {
    const run = runGuard();
    const reads = new CountedReads(run);
    const counted = reads.track(new Readable({ read() {} }));
    run.tracked[0].destroy(new Error('cancelled'));
    await expect(pipeline(counted, sink())).rejects.toThrow('cancelled');

    const other = reads.track(new Readable({ read() {} }));
    other.destroy();
    await new Promise((r) => setImmediate(r));
    expect(run.tracked[1].destroyed).toBe(true);
  });

  it('says what the run says about cancelling', () => {
    const run = { ...runGuard(), cancelled: true };
    expect(new CountedReads(run).cancelled).toBe(true);
  });
});
