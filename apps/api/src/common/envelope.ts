import { StreamableFile } from '@nestjs/common';
import { StreamedObject } from './streamed-object';

/** A result that carries the job envelope's `message` beside `results`. */
export class MessageResult<T = unknown> {
  constructor(
    readonly message: string | null,
    readonly results?: T,
  ) {}
}

export interface Envelope<T> {
  success: true;
  results: T;
  message?: string | null;
}

/**
 * The spec's `{ success, results }` envelope around a handler's result, so controllers return plain
 * results. Streams and empty answers pass through; a StreamedObject becomes the same envelope, written
 * entry by entry. Applied where Nest writes a handler's result (bootstrap.ts, GatewayExpressAdapter.reply),
 * not in an interceptor: Nest 11 binds every interceptor call to an AsyncResource, and that binding
 * (with the deprecated accessors Node 20 defines on each bound function) was a measurable part of a
 * small request (apps/api/README.md, the request path).
 */
export function envelope(value: unknown): unknown {
  if (value instanceof StreamableFile || value === undefined) return value;
  if (value instanceof StreamedObject) return value.toEnvelope();
  if (value instanceof MessageResult) {
    return { success: true, message: value.message, results: (value.results as unknown) ?? null };
  }
  return { success: true, results: value };
}
