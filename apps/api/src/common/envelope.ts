import { CallHandler, ExecutionContext, Injectable, NestInterceptor, StreamableFile } from '@nestjs/common';
import { map, type Observable } from 'rxjs';
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
 * Wraps every JSON handler result in the spec's `{ success, results }`
 * envelope, so controllers return plain results. Streams pass through; a
 * StreamedObject becomes the same envelope, written entry by entry.
 */
@Injectable()
export class EnvelopeInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((value: unknown): unknown => {
        if (value instanceof StreamableFile || value === undefined) return value;
        if (value instanceof StreamedObject) return value.toEnvelope();
        if (value instanceof MessageResult) {
          return { success: true, message: value.message, results: (value.results as unknown) ?? null };
        }
        return { success: true, results: value };
      }),
    );
  }
}
