import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';
import { useNativeCrc32ForArchiver } from './native-crc32';

/** The crc-32 instance archiver's stream CRC uses, loaded the way native-crc32.ts finds it. */
function crc32StreamsCrc(): { buf(data: Uint8Array, seed?: number | Uint8Array): number } {
  const zipStream = createRequire(require.resolve('archiver')).resolve('zip-stream');
  const compressCommons = createRequire(zipStream).resolve('compress-commons');
  const crc32Stream = createRequire(compressCommons).resolve('crc32-stream');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(createRequire(crc32Stream).resolve('crc-32'));
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
