import { createHash, randomBytes, randomInt } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sha256Digest, type Actor, type ContentConnector, type NewContent, type NewFile } from '@gateway/connector-api';
import { DIRECT_COPY_MAX_BYTES, FilesystemConnectorType } from '@gateway/connector-filesystem';
import { HashingPassThrough } from './copy-verification';
import { DocumentCopier, type CopyGuard } from './document-copier';
import { Cancelled } from './run-watcher';
import type { JobDefinition } from '../config/job-definition.dto';

const actor: Actor = { username: 'alice' };
const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const guard: CopyGuard = { cancelled: false, track: (s) => s };
const fresh = { fresh: true, claimedAt: Date.now() };

describe('HashingPassThrough', () => {
  it('hands on every byte unchanged, and says what went through: SHA-256, count and the target digest', async () => {
    const chunks = [Buffer.from('ab'), Buffer.alloc(0), Buffer.from('c'.repeat(100_000))];
    const hashing = new HashingPassThrough(sha256Digest());
    const out: Buffer[] = [];
    await pipeline(Readable.from(chunks), hashing, async (source: AsyncIterable<Buffer>) => {
      for await (const c of source) out.push(c);
    });
    const whole = Buffer.concat(chunks);
    expect(Buffer.concat(out).equals(whole)).toBe(true);
    expect(hashing.sent()).toEqual({ sha256: sha256(whole), bytes: whole.length, targetHash: sha256(whole) });
  });

  it("a target whose kind of hash is SHA-256 gets the one SHA-256 as its hash", async () => {
    const bytes = Buffer.from('z'.repeat(300_000));
    const hashing = new HashingPassThrough('sha256');
    await pipeline(Readable.from([bytes.subarray(0, 70_000), bytes.subarray(70_000)]), hashing, async (source: AsyncIterable<Buffer>) => {
      for await (const _ of source) void _;
    });
    expect(hashing.sent()).toEqual({ sha256: sha256(bytes), bytes: bytes.length, targetHash: sha256(bytes) });
  });

  it('without a target digest, no target hash; before the source ended, no answer', async () => {
    const hashing = new HashingPassThrough();
    expect(() => hashing.sent()).toThrow(/before the source content ended/);
    await pipeline(Readable.from([Buffer.from('x')]), hashing, async (source: AsyncIterable<Buffer>) => {
      for await (const _ of source) void _;
    });
    expect(hashing.sent()).toEqual({ sha256: sha256('x'), bytes: 1 });
  });
});

/** Flips the first byte of what a target writes: a fault between the job's hashing and the target's storage. */
function flipFirstByte(): Transform {
  let first = true;
  return new Transform({
    transform(chunk: Buffer, _e, callback) {
      if (first && chunk.length > 0) {
        first = false;
        chunk = Buffer.from(chunk);
        chunk[0] ^= 0xff;
      }
      callback(null, chunk);
    },
  });
}

/** A target that corrupts every write on its way in (the streamed paths; no direct copy), otherwise the real filesystem connector. */
function corrupting(target: ContentConnector, overrides: Partial<ContentConnector> = {}): ContentConnector {
  return Object.assign(Object.create(target) as ContentConnector, {
    directCopy: undefined,
    createFile: (input: NewFile, a: Actor) => target.createFile({ ...input, content: input.content.pipe(flipFirstByte()) }, a),
    contentUpdate: { updateContent: (id: string, input: NewContent, a: Actor) => target.contentUpdate!.updateContent(id, { ...input, content: input.content.pipe(flipFirstByte()) }, a) },
    ...overrides,
  });
}

/** The verify decisions, on real filesystem connectors, with and without the target's contentHash group. */
describe('DocumentCopier verification', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'verify-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  function definition(options: Partial<JobDefinition['options']> = {}): JobDefinition {
    return {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], ...options },
    };
  }

  async function put(name: string, text: string | Buffer): Promise<string> {
    const folderId = await source.folders!.createFolder('/in', actor);
    return source.createFile({ folderId, fileName: name, content: Readable.from([Buffer.from(text)]) }, actor);
  }
  const copy = (to: ContentConnector, id: string, options: Partial<JobDefinition['options']> = {}, name = 'a.txt') =>
    new DocumentCopier(definition(options), source, to, actor).copy({ id, rel: name, path: `/in/${name}` }, fresh, false, guard);
  const targetHas = (name = 'a.txt') => target.idByPath('/out', name).then(() => true, () => false);
  const withoutHashes = (connector: ContentConnector) => Object.assign(Object.create(connector) as ContentConnector, { contentHash: undefined });

  it('hash: the target reports the SHA-256 it computed while writing; the checksum is that of the source bytes', async () => {
    const id = await put('a.txt', 'alpha');
    // Streamed (not a direct copy): the pass-through hashes, the filesystem target hashes what it writes.
    const streamed = Object.assign(Object.create(target) as ContentConnector, { directCopy: undefined });
    expect(await copy(streamed, id)).toMatchObject({ outcome: 'p', checksum: sha256('alpha'), verified: 'sha256' });
  });

  it('hash: a target without the contentHash group is read back and hashed', async () => {
    const id = await put('a.txt', 'alpha');
    expect(await copy(withoutHashes(target), id)).toMatchObject({ outcome: 'p', checksum: sha256('alpha'), verified: 'read-back' });
  });

  it('hash: a target that reports no hash for this document is read back', async () => {
    const id = await put('a.txt', 'alpha');
    const silent = Object.assign(Object.create(target) as ContentConnector, {
      directCopy: undefined,
      contentHash: { algorithm: 'sha256', digest: sha256Digest, hashOf: async () => undefined },
    });
    expect(await copy(silent, id)).toMatchObject({ outcome: 'p', verified: 'read-back' });
  });

  it.each([
    ['the target reports its hash', (t: ContentConnector) => corrupting(t), 'sha256'],
    ['read back', (t: ContentConnector) => corrupting(withoutHashes(t)), 'read-back'],
  ])('hash, %s: a byte flipped on write is an error naming both hashes, and the copy is removed', async (_, wrap, method) => {
    const id = await put('a.txt', 'alpha');
    const flipped = Buffer.from('alpha');
    flipped[0] ^= 0xff;
    const outcome = await copy(wrap(target), id);
    expect(outcome).toMatchObject({ outcome: 'e', checksum: sha256('alpha'), verified: method });
    expect(outcome?.message).toContain(`CHECKSUM_MISMATCH: source sha256 ${sha256('alpha')}`);
    expect(outcome?.message).toContain(`target sha256 ${sha256(flipped)}`);
    expect(outcome?.message).toContain('the copy is removed');
    expect(await targetHas()).toBe(false);
    // A later run writes it again (here: the same job against the sound target).
    expect(await copy(target, id)).toMatchObject({ outcome: 'p', checksum: sha256('alpha') });
  });

  it('onMismatch keep: the bad copy stays, the error says so', async () => {
    const id = await put('a.txt', 'alpha');
    const outcome = await copy(corrupting(target), id, { onMismatch: 'keep' });
    expect(outcome).toMatchObject({ outcome: 'e' });
    expect(outcome?.message).toContain('the copy is kept (onMismatch: keep)');
    expect(await targetHas()).toBe(true);
  });

  it('a file altered at the target between its write and the check (same size) is caught: the hash kept from the write no longer counts', async () => {
    const id = await put('a.txt', 'alpha');
    // Streamed: a direct copy answers the hash of what it wrote with the write, and no later look is made.
    const altering = Object.assign(Object.create(target) as ContentConnector, {
      directCopy: undefined,
      contentHash: {
        algorithm: 'sha256',
        digest: sha256Digest,
        hashOf: async (targetId: string) => {
          await fsp.writeFile(path.join(dir, 'dst', 'out', 'a.txt'), 'alphA');
          return target.contentHash!.hashOf(targetId);
        },
      },
    });
    const outcome = await copy(altering, id);
    expect(outcome?.message).toContain(`target sha256 ${sha256('alphA')}`);
    expect(await targetHas()).toBe(false);
  });

  it('size: a flipped byte passes (same size), a truncated write does not; none checks nothing', async () => {
    const id = await put('a.txt', 'alpha');
    expect(await copy(corrupting(target), id, { verify: 'size' })).toMatchObject({ outcome: 'p', checksum: sha256('alpha'), verified: 'size' });
    const truncating = corrupting(target, {
      createFile: (input: NewFile, a: Actor) =>
        target.createFile({ ...input, content: input.content.pipe(new Transform({ transform: (c: Buffer, _e, cb) => cb(null, c.subarray(1)) })) }, a),
    });
    const truncated = await copy(truncating, id, { verify: 'size' }, 'b.txt');
    expect(truncated).toMatchObject({ outcome: 'e', verified: 'size', message: 'SIZE_MISMATCH: source 5 bytes, target 4 bytes; the copy is removed' });
    expect(await targetHas('b.txt')).toBe(false);
    expect(await copy(truncating, id, { verify: 'none' }, 'c.txt')).toMatchObject({ outcome: 'p', checksum: sha256('alpha'), verified: 'none' });
  });

  it('200 faults of random kind and place (a bit flipped, the content cut short), each caught, by the target hash and by read-back alike', async () => {
    const sourceBytes = randomBytes(3000);
    const id = await put('a.bin', sourceBytes);
    let caught = 0;
    for (let run = 0; run < 200; run++) {
      const at = randomInt(sourceBytes.length);
      const cut = run % 2 === 1;
      const bit = 1 << randomInt(8);
      const fault = (input: NewFile | NewContent): Readable => {
        let offset = 0;
        return input.content.pipe(
          new Transform({
            transform(chunk: Buffer, _e, callback) {
              const start = offset;
              offset += chunk.length;
              if (at < start || at >= offset) return callback(null, cut && at < start ? undefined : chunk);
              if (cut) return callback(null, chunk.subarray(0, at - start));
              const out = Buffer.from(chunk);
              out[at - start] ^= bit;
              callback(null, out);
            },
          }),
        );
      };
      const faulty = Object.assign(Object.create(run % 4 < 2 ? target : withoutHashes(target)) as ContentConnector, {
        directCopy: undefined,
        createFile: (input: NewFile, a: Actor) => target.createFile({ ...input, content: fault(input) }, a),
      });
      const outcome = await copy(faulty, id, {}, 'a.bin');
      if (outcome?.outcome === 'e' && /^CHECKSUM_MISMATCH/.test(outcome.message ?? '') && !(await targetHas('a.bin'))) caught++;
    }
    expect(caught).toBe(200);
  });

  describe('a large document copied directly (a large-copy thread of the filesystem target)', () => {
    /** Several of the thread's 256 KiB chunks and a short last one, no two chunks alike. */
    const largeBytes = () => {
      const bytes = Buffer.alloc(DIRECT_COPY_MAX_BYTES * 2 + 777);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 16)) & 0xff;
      return bytes;
    };
    /** The target as it is, its direct copies counted: the large copy is made by copyFrom, not streamed. */
    const counting = (to: ContentConnector, after?: (id: string) => Promise<void>) => {
      const made: string[] = [];
      const wrapped = Object.assign(Object.create(to) as ContentConnector, {
        directCopy: {
          copyFrom: async (...args: Parameters<NonNullable<ContentConnector['directCopy']>['copyFrom']>) => {
            const done = await target.directCopy!.copyFrom(...args);
            if (done) {
              made.push(done.id);
              await after?.(done.id);
            }
            return done;
          },
        },
      });
      return { wrapped, made };
    };

    it.each(['hash', 'size', 'none'] as const)('verify %s: the checksum is the SHA-256 of the whole content, the bytes arrive whole', async (verify) => {
      const bytes = largeBytes();
      const id = await put('big.bin', bytes);
      const { wrapped, made } = counting(target);
      const outcome = await copy(wrapped, id, { verify }, 'big.bin');
      expect(outcome).toMatchObject({ outcome: 'p', checksum: sha256(bytes), verified: verify === 'hash' ? 'sha256' : verify });
      expect(made).toHaveLength(1);
      expect((await fsp.readFile(path.join(dir, 'dst', 'out', 'big.bin'))).equals(bytes)).toBe(true);
    });

    it('a run halted (paused, killed) before the copy started: it gives up its place, the document stays claimed, nothing is written', async () => {
      const id = await put('big.bin', largeBytes());
      const halt = new AbortController();
      halt.abort(new Cancelled('halted'));
      const copier = new DocumentCopier(definition(), source, target, actor);
      expect(await copier.copy({ id, rel: 'big.bin', path: '/in/big.bin' }, fresh, false, { ...guard, halted: halt.signal })).toBeUndefined();
      expect(await targetHas('big.bin')).toBe(false);
    });

    it('a byte flipped at the target after the copy: read back (hash), an error naming both hashes, the copy removed', async () => {
      const bytes = largeBytes();
      const id = await put('big.bin', bytes);
      const at = DIRECT_COPY_MAX_BYTES + 5;
      const flip = async () => {
        const handle = await fsp.open(path.join(dir, 'dst', 'out', 'big.bin'), 'r+');
        await handle.write(Buffer.from([bytes[at] ^ 0x01]), 0, 1, at);
        await handle.close();
      };
      const { wrapped, made } = counting(withoutHashes(target), flip);
      const flipped = Buffer.from(bytes);
      flipped[at] ^= 0x01;
      const outcome = await copy(wrapped, id, {}, 'big.bin');
      expect(made).toHaveLength(1);
      expect(outcome).toMatchObject({ outcome: 'e', checksum: sha256(bytes), verified: 'read-back' });
      expect(outcome?.message).toContain(`CHECKSUM_MISMATCH: source sha256 ${sha256(bytes)}`);
      expect(outcome?.message).toContain(`target sha256 ${sha256(flipped)}`);
      expect(await targetHas('big.bin')).toBe(false);
    });
  });

  it('a new version that fails its check removes that version only: the document keeps its earlier content', async () => {
    const id = await put('a.txt', 'alpha');
    expect(await copy(target, id)).toMatchObject({ outcome: 'p' });
    await fsp.writeFile(path.join(dir, 'src', 'in', 'a.txt'), 'beta!');
    const outcome = await copy(corrupting(target), id, { onExisting: 'version' });
    expect(outcome).toMatchObject({ outcome: 'e', checksum: sha256('beta!') });
    expect(outcome?.message).toContain('the version written is removed');
    const chunks: Buffer[] = [];
    for await (const c of await target.openContent(await target.idByPath('/out', 'a.txt'))) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('alpha');
  });
});
