import type { ContentDigest } from '@gateway/connector-api';

const WIDTH_BITS = 160;
const WIDTH_BYTES = WIDTH_BITS / 8;
const SHIFT = 11;

/**
 * Microsoft's QuickXorHash (the `quickXorHash` Graph reports for every file of a SharePoint or OneDrive
 * for Business drive; docs: onedrive-api-docs, code-snippets/quickxorhash.md), base64. Byte n of the
 * content is XORed into a 160-bit register at bit (11 × n) mod 160, wrapping round; the content's length
 * (64 bits, little-endian) is XORed into the register's last 8 bytes; the register's bytes, low bits
 * first, are the hash. Bytes 160 apart land on the same bits, so each chunk's bytes are first folded by
 * their position mod 160, then XORed in once per position.
 */
export class QuickXorHash implements ContentDigest {
  private readonly register = new Uint8Array(WIDTH_BYTES);
  private readonly folded = new Uint8Array(WIDTH_BITS);
  private length = 0;

  update(chunk: Buffer): void {
    const count = Math.min(chunk.length, WIDTH_BITS);
    const folded = this.folded;
    folded.fill(0, 0, count);
    for (let i = 0; i < chunk.length; i++) folded[i % WIDTH_BITS] ^= chunk[i];
    for (let i = 0; i < count; i++) this.xorAt((this.length + i) % WIDTH_BITS, folded[i]);
    this.length += chunk.length;
  }

  digest(): string {
    const out = Buffer.from(this.register);
    // Length as a little-endian 64-bit integer into the last 8 bytes.
    let length = BigInt(this.length);
    for (let i = 0; i < 8; i++) {
      out[WIDTH_BYTES - 8 + i] ^= Number(length & 0xffn);
      length >>= 8n;
    }
    return out.toString('base64');
  }

  /** XORs `byte` into the register at the bit of content position `position` (mod 160). */
  private xorAt(position: number, byte: number): void {
    if (byte === 0) return;
    const bit = (position * SHIFT) % WIDTH_BITS;
    const at = bit >> 3;
    const value = byte << (bit & 7);
    this.register[at] ^= value & 0xff;
    this.register[(at + 1) % WIDTH_BYTES] ^= value >> 8;
  }
}
