import type { Readable } from 'node:stream';
import { Parser } from 'htmlparser2';
import * as iconv from 'iconv-lite';
import { detectCharset, SNIFF_BYTES, type Charset } from './charset';
import type { NativeKind } from './media';

export interface NativeResult {
  text: string;
  truncated: boolean;
  charset: Charset;
}

/** Collects text up to maxChars; past it, only notes that there was more. */
class TextSink {
  private readonly parts: string[] = [];
  length = 0;
  truncated = false;

  constructor(private readonly maxChars: number) {}

  /** Whether anything more can be kept; once false, the caller stops decoding. */
  get open(): boolean {
    return !this.truncated;
  }

  append(text: string): void {
    if (text === '' || this.truncated) return;
    const room = this.maxChars - this.length;
    if (text.length <= room) {
      this.parts.push(text);
      this.length += text.length;
      return;
    }
    // Never leave half a surrogate pair at the cut.
    let cut = room;
    if (cut > 0 && isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
    if (cut > 0) this.parts.push(text.slice(0, cut));
    this.length += cut;
    this.truncated = true;
  }

  text(): string {
    return this.parts.join('');
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * Markup's text as a reader sees it: runs of white space become one space, and block elements
 * start a new line, so that words of neighbouring paragraphs or cells do not run together.
 */
class MarkupText {
  private space = false;
  private newline = false;
  private started = false;

  constructor(private readonly sink: TextSink) {}

  text(raw: string): void {
    const collapsed = raw.replace(/\s+/g, ' ');
    if (collapsed === '') return;
    if (collapsed === ' ') {
      this.space = true;
      return;
    }
    let body = collapsed;
    if (body.startsWith(' ')) {
      this.space = true;
      body = body.slice(1);
    }
    const trailing = body.endsWith(' ');
    if (trailing) body = body.slice(0, -1);
    if (this.started) {
      if (this.newline) this.sink.append('\n');
      else if (this.space) this.sink.append(' ');
    }
    this.sink.append(body);
    this.started = true;
    this.space = trailing;
    this.newline = false;
  }

  block(): void {
    this.newline = true;
  }

  separate(): void {
    this.space = true;
  }
}

/** Elements whose content is not text a reader sees. */
const HIDDEN = new Set(['script', 'style', 'template', 'noscript', 'svg']);
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'option', 'p', 'pre', 'section',
  'summary', 'table', 'title', 'tr', 'ul',
]);
const CELLS = new Set(['td', 'th']);

interface Decoder {
  write(chunk: Buffer): void;
  end(): void;
}

function plainDecoder(sink: TextSink): (text: string) => void {
  return (text) => sink.append(text);
}

function markupDecoder(sink: TextSink, xmlMode: boolean): { write: (text: string) => void; end: () => void } {
  const out = new MarkupText(sink);
  let hidden = 0;
  const parser = new Parser(
    {
      onopentagname(name) {
        if (!xmlMode && HIDDEN.has(name)) hidden += 1;
        if (xmlMode || BLOCKS.has(name)) out.block();
        else if (CELLS.has(name)) out.separate();
      },
      onclosetag(name) {
        if (!xmlMode && HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        if (xmlMode || BLOCKS.has(name)) out.block();
        else if (CELLS.has(name)) out.separate();
      },
      ontext(text) {
        if (hidden === 0) out.text(text);
      },
    },
    // The tokenizer decodes entities (named, decimal, hex) with the `entities` package, also across chunks.
    { xmlMode, decodeEntities: true, lowerCaseTags: !xmlMode, recognizeCDATA: true },
  );
  return { write: (text) => parser.write(text), end: () => parser.end() };
}

/**
 * Decodes the stream chunk by chunk (iconv-lite keeps characters split across chunks), feeding the
 * text or the markup parser, until maxChars; the rest of the stream is read and dropped. Memory holds
 * the first KiB (to find the charset) and the text kept, never the document.
 */
export async function extractNative(
  content: Readable,
  kind: NativeKind,
  declaredCharset: string | undefined,
  maxChars: number,
  signal?: AbortSignal,
): Promise<NativeResult> {
  const sink = new TextSink(maxChars);
  let charset: Charset | undefined;
  let decoder: Decoder | undefined;
  const head: Buffer[] = [];
  let headBytes = 0;

  const start = (bytes: Buffer) => {
    charset = detectCharset(bytes, kind, declaredCharset);
    const iconvDecoder = iconv.getDecoder(charset.encoding, { stripBOM: false });
    const target = kind === 'text' ? { write: plainDecoder(sink), end: () => undefined } : markupDecoder(sink, kind === 'xml');
    decoder = {
      write(chunk) {
        const text = iconvDecoder.write(chunk);
        if (text) target.write(text);
      },
      end() {
        const rest = iconvDecoder.end();
        if (rest) target.write(rest);
        target.end();
      },
    };
    const body = bytes.subarray(charset.bomLength);
    if (body.length > 0) decoder.write(body);
  };

  const onAbort = () => content.destroy(signal?.reason instanceof Error ? signal.reason : abortError());
  signal?.throwIfAborted();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of content) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      if (!decoder) {
        head.push(bytes);
        headBytes += bytes.length;
        if (headBytes >= SNIFF_BYTES) start(Buffer.concat(head));
        continue;
      }
      // Past maxChars the rest is only drained: the source is read to its end, nothing decoded or kept.
      if (sink.open) decoder.write(bytes);
    }
    if (!decoder) start(Buffer.concat(head));
    if (sink.open) decoder!.end();
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return { text: sink.text(), truncated: sink.truncated, charset: charset! };
}

export function abortError(): Error {
  const error = new Error('The extraction was aborted');
  error.name = 'AbortError';
  return error;
}
