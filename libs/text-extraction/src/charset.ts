import * as iconv from 'iconv-lite';
import type { NativeKind } from './media';

/** How many leading bytes are searched for a declared charset (HTML's prescan looks at 1024). */
export const SNIFF_BYTES = 1024;

export interface Charset {
  /** A label iconv-lite knows. */
  encoding: string;
  /** Bytes of a byte-order mark to skip. */
  bomLength: number;
  /** Where the encoding came from. */
  source: 'bom' | 'media type' | 'document' | 'default';
  /** A declared label that iconv-lite does not know (decoded as UTF-8 instead). */
  unknownLabel?: string;
}

function bomOf(head: Buffer): { encoding: string; length: number } | undefined {
  if (head.length >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  // UTF-32LE's mark starts like UTF-16LE's: test it first.
  if (head.length >= 4 && head[0] === 0xff && head[1] === 0xfe && head[2] === 0 && head[3] === 0) return { encoding: 'utf-32le', length: 4 };
  if (head.length >= 4 && head[0] === 0 && head[1] === 0 && head[2] === 0xfe && head[3] === 0xff) return { encoding: 'utf-32be', length: 4 };
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/** `<meta charset=x>` or `<meta http-equiv="Content-Type" content="…; charset=x">` among the first bytes. */
function htmlDeclared(head: Buffer): string | undefined {
  // Latin-1 maps every byte to one char, so the ASCII markup is found whatever the real encoding.
  const text = head.subarray(0, SNIFF_BYTES).toString('latin1');
  for (const meta of text.matchAll(/<meta\b[^>]*>/gi)) {
    const tag = meta[0];
    const direct = /\bcharset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)/i.exec(tag);
    if (direct) return direct[1];
  }
  return undefined;
}

/** `<?xml version="1.0" encoding="x"?>` at the start. */
function xmlDeclared(head: Buffer): string | undefined {
  const text = head.subarray(0, SNIFF_BYTES).toString('latin1');
  return /^\s*<\?xml\b[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(text)?.[1];
}

/**
 * The document's charset, in the order HTML gives them: a byte-order mark, then the declared media
 * type's charset, then what the document itself declares in its first KiB, else UTF-8.
 */
export function detectCharset(head: Buffer, kind: NativeKind, declared: string | undefined): Charset {
  const bom = bomOf(head);
  if (bom) return { encoding: bom.encoding, bomLength: bom.length, source: 'bom' };
  const candidates: Array<[string | undefined, Charset['source']]> = [
    [declared, 'media type'],
    [kind === 'html' ? htmlDeclared(head) : kind === 'xml' ? xmlDeclared(head) : undefined, 'document'],
  ];
  let unknownLabel: string | undefined;
  for (const [label, source] of candidates) {
    if (!label) continue;
    if (iconv.encodingExists(label)) {
      // A page that says UTF-16 in its ASCII-readable markup cannot be UTF-16 (HTML's rule): it is UTF-8.
      const encoding = source === 'document' && /^utf-?16/i.test(label) ? 'utf-8' : label;
      return { encoding, bomLength: 0, source };
    }
    unknownLabel ??= label;
  }
  return { encoding: 'utf-8', bomLength: 0, source: 'default', unknownLabel };
}
