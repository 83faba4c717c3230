import type { Readable } from 'node:stream';

/**
 * The contract between indexing jobs and text extraction (issue 14). The job
 * hands over the document's content stream; the extractor never buffers it
 * whole (native formats are decoded as they stream, everything else streams
 * to Apache Tika Server's /tika endpoint).
 */
export interface ExtractionInput {
  /** The document's name (its extension helps when the media type is generic). */
  name: string;
  /** The media type the source declares, if any. */
  mimeType?: string;
  /** The size the source declares, if any (Content-Length toward Tika). */
  size?: number;
}

export interface ExtractionLimits {
  /** Text beyond this many characters is cut (`truncated: true`); the rest of the stream is drained, not decoded. */
  maxChars: number;
  /** Aborts the extraction (and the upstream Tika request) when the job is killed. */
  signal?: AbortSignal;
}

export interface ExtractionResult {
  text: string;
  truncated: boolean;
  /** `native`: decoded in the gateway; `tika`: Tika's plain text; `none`: metadata only (see warning). */
  method: 'native' | 'tika' | 'none';
  /** Why there is no text (no TIKA_URL, Tika failed or timed out, unsupported type): the job records it and goes on. */
  warning?: string;
}

export interface TextExtractor {
  /**
   * Never rejects because Tika is missing, fails or times out (that is `method: 'none'` with a
   * warning); rejects only when the content stream itself fails or `signal` aborts.
   */
  extract(content: Readable, input: ExtractionInput, limits: ExtractionLimits): Promise<ExtractionResult>;
}

/** Nest injection token of the process's TextExtractor (built from TIKA_URL / TIKA_TIMEOUT_MS). */
export const TEXT_EXTRACTOR = Symbol('TEXT_EXTRACTOR');
