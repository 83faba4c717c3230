import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { useNativeCrc32ForArchiver } from './native-crc32';

/** Archiver's chain as native-crc32.ts resolves it: the entry files of compress-commons and crc32-stream. */
function archiverChain(): { compressCommons: string; crc32Stream: string } {
  const zipStream = createRequire(require.resolve('archiver')).resolve('zip-stream');
  const compressCommons = createRequire(zipStream).resolve('compress-commons');
  return { compressCommons, crc32Stream: createRequire(compressCommons).resolve('crc32-stream') };
}

/** The crc-32 instance archiver's stream CRC uses, loaded the way native-crc32.ts finds it. */
function crc32StreamsCrc(): { buf(data: Uint8Array, seed?: number | Uint8Array): number } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module instance archiver resolves, by its own require chain
  return require(createRequire(archiverChain().crc32Stream).resolve('crc-32'));
}

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

describe('useNativeCrc32ForArchiver', () => {
  const hasNative = typeof (zlib as { crc32?: unknown }).crc32 === 'function';

  it('switches archiver’s crc-32 once, and it still computes CRC-32/ISO-HDLC', () => {
    const first = useNativeCrc32ForArchiver();
    if (hasNative) expect(first).toBeGreaterThanOrEqual(1);
    expect(useNativeCrc32ForArchiver()).toBe(0);

    const crc = crc32StreamsCrc();
    const check = Buffer.from('123456789', 'ascii');
    expect(crc.buf(check) >>> 0).toBe(0xcbf43926); // the standard check value
    expect(crc.buf(check, Buffer.alloc(4)) >>> 0).toBe(0xcbf43926); // crc32-stream's initial seed
    expect(crc.buf(check.subarray(4), crc.buf(check.subarray(0, 4)) >>> 0) >>> 0).toBe(0xcbf43926); // continued
    expect(crc.buf(Buffer.alloc(0))).toBe(0);
  });
});

/**
 * The patch replaces `buf` on the crc-32 module object that these files hold as `crc32` and call as
 * `crc32.buf(...)` (docs/decisions/0018-zip-crc32.md). A new version of any of them may destructure it,
 * change its seed or sign convention, or bring a CRC of its own: then this fails, and the patch and its
 * figure are to be checked again (or the patch dropped) before the hashes are updated.
 */
describe('the archiver modules native-crc32.ts patches are the ones it was checked against', () => {
  it('has the pinned crc-32, crc32-stream and compress-commons files', () => {
    const { compressCommons, crc32Stream } = archiverChain();
    const at = (entry: string, relative: string) => createRequire(entry).resolve(relative);
    expect({
      'crc-32/crc32.js': sha256(createRequire(crc32Stream).resolve('crc-32')),
      'crc-32 (compress-commons)': sha256(createRequire(compressCommons).resolve('crc-32')),
      'crc32-stream/lib/crc32-stream.js': sha256(at(crc32Stream, './crc32-stream')),
      'crc32-stream/lib/deflate-crc32-stream.js': sha256(at(crc32Stream, './deflate-crc32-stream')),
      'compress-commons/lib/archivers/zip/zip-archive-output-stream.js': sha256(at(compressCommons, './archivers/zip/zip-archive-output-stream')),
    }).toEqual({
      'crc-32/crc32.js': '8450a98f18b8a24ed088d07d64c5134896e54079757f783945054167a9d2e75e', // crc-32 1.2.2
      'crc-32 (compress-commons)': '8450a98f18b8a24ed088d07d64c5134896e54079757f783945054167a9d2e75e',
      'crc32-stream/lib/crc32-stream.js': '52d473fce35b1983df63e7ddc769636c57ea1ecddd32be90626895a68af8bcce', // crc32-stream 6.0.0
      'crc32-stream/lib/deflate-crc32-stream.js': '3a81462592c0c0d84fc86cb6f5a00aa84d22875173f04d84524ea6c245344a8a',
      'compress-commons/lib/archivers/zip/zip-archive-output-stream.js': '262cce586a8d182efb086e5be6b617958366851b53c1c95298377eec085274c4', // compress-commons 6.0.2
    });
  });
});
