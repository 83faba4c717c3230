import { crc32, inflateRawSync } from 'node:zlib';

/** One entry of a zip as stored, with its bytes decompressed and checked against the stored CRC-32 and size. */
export interface ZipEntry {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  size: number;
  compressedSize: number;
  modified: Date;
  data: Buffer;
}

/**
 * A small, strict zip reader for tests (no dependency, no system `unzip`):
 * walks the central directory (zip64 included), checks each local header
 * against it, inflates, and verifies CRC-32 and sizes. Throws on anything
 * inconsistent, so a test that reads a zip also validates it.
 */
export function readZip(zip: Buffer): ZipEntry[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || zip.length - eocd < 22) throw new Error('not a zip: no end of central directory record');
  let count = zip.readUInt16LE(eocd + 10);
  let cdSize = zip.readUInt32LE(eocd + 12);
  let cdOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    const locator = eocd - 20;
    if (zip.readUInt32LE(locator) !== 0x07064b50) throw new Error('zip64 end of central directory locator missing');
    const zip64 = Number(zip.readBigUInt64LE(locator + 8));
    if (zip.readUInt32LE(zip64) !== 0x06064b50) throw new Error('zip64 end of central directory record missing');
    count = Number(zip.readBigUInt64LE(zip64 + 32));
    cdSize = Number(zip.readBigUInt64LE(zip64 + 40));
    cdOffset = Number(zip.readBigUInt64LE(zip64 + 48));
  }
  const entries: ZipEntry[] = [];
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error(`central directory entry ${i}: bad signature`);
    const flags = zip.readUInt16LE(p + 8);
    const method = zip.readUInt16LE(p + 10);
    const dosTime = zip.readUInt16LE(p + 12);
    const dosDate = zip.readUInt16LE(p + 14);
    const crc = zip.readUInt32LE(p + 16);
    let compressedSize = zip.readUInt32LE(p + 20);
    let size = zip.readUInt32LE(p + 24);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    let localOffset = zip.readUInt32LE(p + 42);
    const nameBytes = zip.subarray(p + 46, p + 46 + nameLength);
    const name = nameBytes.toString(flags & 0x800 ? 'utf8' : 'latin1');
    const extra = zip.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength);
    for (let e = 0; e + 4 <= extra.length; ) {
      const id = extra.readUInt16LE(e);
      const len = extra.readUInt16LE(e + 2);
      if (id === 0x0001) {
        let q = e + 4;
        if (size === 0xffffffff) {
          size = Number(extra.readBigUInt64LE(q));
          q += 8;
        }
        if (compressedSize === 0xffffffff) {
          compressedSize = Number(extra.readBigUInt64LE(q));
          q += 8;
        }
        if (localOffset === 0xffffffff) localOffset = Number(extra.readBigUInt64LE(q));
      }
      e += 4 + len;
    }
    p += 46 + nameLength + extraLength + commentLength;

    if (zip.readUInt32LE(localOffset) !== 0x04034b50) throw new Error(`${name}: bad local header signature`);
    const localNameLength = zip.readUInt16LE(localOffset + 26);
    const localExtraLength = zip.readUInt16LE(localOffset + 28);
    const localName = zip.subarray(localOffset + 30, localOffset + 30 + localNameLength);
    if (!localName.equals(nameBytes)) throw new Error(`${name}: local header names '${localName.toString()}'`);
    if (zip.readUInt16LE(localOffset + 8) !== method) throw new Error(`${name}: local header has another method`);
    const start = localOffset + 30 + localNameLength + localExtraLength;
    const raw = zip.subarray(start, start + compressedSize);
    if (raw.length !== compressedSize) throw new Error(`${name}: truncated data`);
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw new Error(`${name}: unsupported method ${method}`);
    if (data.length !== size) throw new Error(`${name}: ${data.length} bytes, the directory says ${size}`);
    if (crc32(data) >>> 0 !== crc) throw new Error(`${name}: CRC-32 mismatch`);
    const modified = new Date(1980 + (dosDate >> 9), ((dosDate >> 5) & 0xf) - 1, dosDate & 0x1f, dosTime >> 11, (dosTime >> 5) & 0x3f, (dosTime & 0x1f) * 2);
    entries.push({ name, method, size, compressedSize, modified, data });
  }
  if (p !== cdOffset + cdSize) throw new Error('central directory size does not add up');
  return entries;
}
