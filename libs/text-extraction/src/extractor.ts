import * as fs from 'node:fs';
import type { Readable } from 'node:stream';
import { routeOf } from './media';
import { extractNative } from './native';
import { TikaClient } from './tika';
import type { ExtractionInput, ExtractionLimits, ExtractionResult, TextExtractor } from './text-extractor';

export interface TextExtractorOptions {
  /** Tika Server's base URL (TIKA_URL); without it, formats that are not native get metadata only. */
  tikaUrl?: string;
  /** TIKA_TIMEOUT_MS: one document's whole exchange with Tika; default 60000. */
  tikaTimeoutMs?: number;
  /** PEM file of the CA behind an https TIKA_URL. */
  caFile?: string;
}

export const DEFAULT_TIKA_TIMEOUT_MS = 60_000;

export interface ClosableTextExtractor extends TextExtractor {
  /** Where documents that are not native go, or undefined without TIKA_URL. */
  readonly tikaUrl?: string;
  /** Closes the kept-alive connections to Tika. */
  close(): void;
}

class GatewayTextExtractor implements ClosableTextExtractor {
  private readonly tika?: TikaClient;

  constructor(options: TextExtractorOptions) {
    if (options.tikaUrl) {
      this.tika = new TikaClient({
        url: options.tikaUrl,
        timeoutMs: options.tikaTimeoutMs ?? DEFAULT_TIKA_TIMEOUT_MS,
        ca: options.caFile ? fs.readFileSync(options.caFile) : undefined,
      });
    }
  }

  get tikaUrl(): string | undefined {
    return this.tika?.url;
  }

  async extract(content: Readable, input: ExtractionInput, limits: ExtractionLimits): Promise<ExtractionResult> {
    if (!Number.isInteger(limits.maxChars) || limits.maxChars < 0) throw new RangeError(`maxChars: must be a whole number ≥ 0 (got ${limits.maxChars})`);
    const route = routeOf(input);
    if (route.kind !== 'tika') {
      const native = await extractNative(content, route.kind, route.charset, limits.maxChars, limits.signal);
      const warning = native.charset.unknownLabel
        ? `unknown charset '${native.charset.unknownLabel}' declared by ${input.name}: decoded as UTF-8`
        : undefined;
      return { text: native.text, truncated: native.truncated, method: 'native', ...(warning ? { warning } : {}) };
    }
    const described = `${input.name}${input.mimeType ? ` (${input.mimeType})` : ''}`;
    if (!this.tika) {
      limits.signal?.throwIfAborted();
      // The job records the warning and indexes the metadata; the stream's source is released unread.
      content.destroy();
      return { text: '', truncated: false, method: 'none', warning: `no TIKA_URL configured: no text extracted from ${described}` };
    }
    const outcome = await this.tika.extract(content, { name: input.name, mimeType: route.mimeType, size: input.size }, limits.maxChars, limits.signal);
    if (!outcome.ok) return { text: '', truncated: false, method: 'none', warning: `${outcome.warning}: no text extracted from ${described}` };
    return { text: outcome.text, truncated: outcome.truncated, method: 'tika' };
  }

  close(): void {
    this.tika?.close();
  }
}

/** The process's extractor: native decoders for text formats, Tika Server for the rest when configured. */
export function createTextExtractor(options: TextExtractorOptions = {}): ClosableTextExtractor {
  return new GatewayTextExtractor(options);
}
