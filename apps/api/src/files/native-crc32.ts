import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/** The part of the crc-32 package archiver's zip engine calls. */
interface Crc32Module {
  buf(data: Uint8Array, seed?: number | Uint8Array): number;
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** crc-32's `buf` on zlib: crc-32 answers a signed 32-bit value and reads a seed that is no number (crc32-stream starts with a Buffer) as 0. */
const replacement: Crc32Module['buf'] | undefined =
  typeof native === 'function' ? (data, seed) => native(data, typeof seed === 'number' ? seed >>> 0 : 0) | 0 : undefined;

/**
 * archiver's zip engine (compress-commons and crc32-stream) computes every
 * entry's CRC-32 with the crc-32 package, in JavaScript: about a second of
 * CPU per GB, the largest single cost of a stored (level 0) zip. Node has
 * zlib's native crc32 (20.15 and later), the same function (CRC-32/ISO-HDLC)
 * several times faster. This points the crc-32 module those two load at it,
 * once, for the whole process.
 *
 * Kept safe: the crc-32 modules are the ones resolved from archiver's own
 * dependency chain; each is switched only when the native function gives
 * exactly its answers on a sample (a fresh CRC, a continued one, the
 * Buffer seed crc32-stream starts with, empty input); otherwise, or without
 * zlib.crc32, archiver keeps its own. Returns how many modules were switched.
 *
 * Why a patch stays (docs/decisions/0018-zip-crc32.md): archiver has no public hook for it, and no
 * maintained streaming zip writer computes CRCs natively (archiver 8, yazl 3 neither). Measured 29 Nov
 * 2026: a stored zip of 1 GB costs archiver 1.22–1.26 s of CPU with its own CRC, 0.70–0.73 s with
 * this, about a fifth of an export's CPU. native-crc32.spec.ts pins the files patched: an upgrade
 * fails it until this is checked again.
 */
export function useNativeCrc32ForArchiver(): number {
  if (replacement === undefined) return 0;
  let switched = 0;
  for (const module of archiverCrc32Modules()) {
    if (module.buf === replacement || !sameAnswers(module.buf.bind(module), replacement)) continue;
    module.buf = replacement;
    switched++;
  }
  return switched;
}

function archiverCrc32Modules(): Crc32Module[] {
  const found = new Set<Crc32Module>();
  try {
    // Resolved along archiver's chain; loaded with this module's own require, so the instances
    // are the ones archiver gets (the process's module cache, or a test runner's registry).
    const zipStream = createRequire(require.resolve('archiver')).resolve('zip-stream');
    const compressCommons = createRequire(zipStream).resolve('compress-commons');
    const crc32Stream = createRequire(compressCommons).resolve('crc32-stream');
    for (const dependent of [compressCommons, crc32Stream]) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the crc-32 instance each dependent resolves, by its own require chain
      const module = require(createRequire(dependent).resolve('crc-32')) as Partial<Crc32Module>;
      if (typeof module?.buf === 'function') found.add(module as Crc32Module);
    }
  } catch {
    // A different archiver layout: leave it alone.
  }
  return [...found];
}

function sameAnswers(original: Crc32Module['buf'], replacement: Crc32Module['buf']): boolean {
  const sample = Buffer.from('The quick brown fox jumps over the lazy dog, 0123456789 \u00e9\u00e8\u4e2d', 'utf8');
  const head = sample.subarray(0, 17);
  const tail = sample.subarray(17);
  const cases: Array<[Uint8Array, (number | Uint8Array)?]> = [
    [sample],
    [tail, original(head) >>> 0],
    [tail, original(head)],
    [sample, Buffer.alloc(4)],
    [Buffer.alloc(0)],
    [Buffer.alloc(0), 0x12345678],
  ];
  return cases.every(([data, seed]) => original(data, seed) === replacement(data, seed));
}
