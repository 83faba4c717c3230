import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer, { MulterError, type StorageEngine } from 'multer';
import { Transform, type Readable } from 'node:stream';
import { InvalidArgumentError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@gateway/errors';
import { tooLarge } from './request-guards';

/** One file part as it streams in; `stream` must be consumed (or abandoned by throwing). */
export interface IncomingFilePart {
  stream: Readable;
  /** The part's filename, decoded as UTF-8 (RFC 7578 clients send raw UTF-8). */
  fileName: string;
  /** The part's Content-Type as the client declared it. */
  mimeType?: string;
}

/**
 * Multipart limits. The file itself is unlimited (it streams to the
 * repository); everything else is small, because the gateway reads its
 * parameters from the query string and only needs the one file part.
 */
export const MULTIPART_LIMITS = {
  files: 1,
  fields: 20,
  fieldNameSize: 200,
  fieldSize: 64 * 1024,
  parts: 32,
  headerPairs: 100,
} as const satisfies multer.Options['limits'];

/**
 * The request body of a route that takes file content, handed to services so
 * they decide when (and whether) to read it, after parameters, connector and
 * capability checks have passed. Nothing is read before a consumer asks.
 */
export class IncomingContent {
  constructor(
    private readonly req: Request,
    private readonly res: Response,
  ) {}

  /** The media type essence of the body, lower-cased; undefined without Content-Type. */
  get mediaType(): string | undefined {
    return mediaTypeOf(this.req.headers['content-type']);
  }

  /** The declared Content-Type, verbatim, for drivers that keep it. */
  get contentType(): string | undefined {
    return this.req.headers['content-type'];
  }

  /**
   * The raw body as a stream, or undefined when the request has none. A
   * chunked body is peeked at so that an empty one counts as none too.
   */
  async rawBody(): Promise<Readable | undefined> {
    const req = this.req;
    if (req.headers['transfer-encoding'] === undefined) {
      const length = Number(req.headers['content-length'] ?? 0);
      return length > 0 ? this.limited(req) : undefined;
    }
    const body = await nonEmpty(req);
    return body && this.limited(body);
  }

  /** The raw body as a stream, empty or not (updateContent: an empty body is an empty file). */
  rawStream(): Readable {
    return this.limited(this.req);
  }

  /** GATEWAY_MAX_UPLOAD_BYTES, set on res.locals by the uploadLimit middleware (undefined: no limit). */
  private get maxBytes(): number | undefined {
    const max = (this.res.locals as { maxUploadBytes?: number } | undefined)?.maxUploadBytes;
    return typeof max === 'number' && max > 0 ? max : undefined;
  }

  private limited(source: Readable): Readable {
    const max = this.maxBytes;
    return max === undefined ? source : limitBytes(source, max);
  }

  /**
   * Streams the single file part named `field` of a multipart/form-data body
   * into `sink`, through a multer storage engine: nothing is buffered and no
   * temporary copy is made here. When the request fails after `sink`
   * succeeded (a second file, a limit), `undo` removes what `sink` created.
   */
  receiveFile<T>(field: string, sink: (part: IncomingFilePart) => Promise<T>, undo: (result: T) => Promise<unknown>): Promise<T> {
    const contentType = this.req.headers['content-type'];
    if (mediaTypeOf(contentType) !== 'multipart/form-data') {
      return Promise.reject(
        new UnsupportedMediaTypeError(
          `Content-Type must be multipart/form-data with the file in the part named '${field}' (got ${contentType ? `'${contentType}'` : 'none'})`,
          { parameter: 'Content-Type' },
        ),
      );
    }
    if (!/;\s*boundary\s*=\s*("[^"]+"|[^;\s]+)/i.test(contentType ?? '')) {
      return Promise.reject(new InvalidArgumentError('boundary', "Invalid parameter 'boundary': multipart/form-data needs a boundary parameter in Content-Type", 'MISSING_BOUNDARY'));
    }
    type Stored = { result?: T };
    const storage: StorageEngine = {
      _handleFile: (_req, file, callback) => {
        const stream = this.maxBytes === undefined ? file.stream : limitBytes(file.stream, this.maxBytes);
        sink({ stream, fileName: file.originalname, mimeType: file.mimetype || undefined }).then(
          (result) => callback(null, { result } as Partial<Express.Multer.File> & Stored),
          (e: unknown) => {
            // A sink that failed before reading leaves the part unread; busboy must not wait on it.
            file.stream.resume();
            callback(e);
          },
        );
      },
      _removeFile(_req, file, callback) {
        const stored = file as Express.Multer.File & Stored;
        if (stored.result === undefined) return callback(null);
        undo(stored.result).then(
          () => callback(null),
          (e: unknown) => callback(e as Error),
        );
      },
    };
    const upload = multer({ storage, limits: MULTIPART_LIMITS, defParamCharset: 'utf8' }).single(field);
    return new Promise<T>((resolve, reject) => {
      upload(this.req, this.res, (err?: unknown) => {
        if (err) return reject(multipartError(err, field));
        const file = this.req.file as Express.Multer.File & Stored;
        if (!file || file.result === undefined) {
          return reject(new InvalidArgumentError(field, `Invalid parameter '${field}': the multipart body has no file part named '${field}'`, 'MISSING_FILE'));
        }
        resolve(file.result);
      });
    });
  }
}

/** The body of a content route, unread. Custom decorators skip the validation pipe, which is what we want here. */
export const RequestContent = createParamDecorator((_data: unknown, ctx: ExecutionContext): IncomingContent => {
  const http = ctx.switchToHttp();
  return new IncomingContent(http.getRequest<Request>(), http.getResponse<Response>());
});

export function mediaTypeOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const essence = contentType.split(';', 1)[0].trim().toLowerCase();
  return essence === '' ? undefined : essence;
}

/**
 * `source` through a counter that fails with PayloadTooLargeError (413) once more than `max` bytes
 * passed: the consumer (a driver's write) fails and removes what it staged, and the rest of the
 * body is left unread (the filter drains it within bounds: lingering-close.ts). `source` itself is not
 * destroyed, so the 413 can still be written on its socket.
 */
export function limitBytes(source: Readable, max: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > max) {
        source.unpipe(counter);
        source.pause();
        return callback(tooLarge(max));
      }
      callback(null, chunk);
    },
  });
  source.once('error', (e) => counter.destroy(e));
  // A driver may attach its listeners only after an await (a token, an existence check): a truncated body
  // must not crash the process meanwhile. The driver still sees the error (the stream is destroyed with it),
  // and multer answers the request with the source's own error.
  counter.on('error', () => undefined);
  source.pipe(counter);
  return counter;
}

/** Resolves to the stream when it yields at least one byte, undefined when it ends empty. */
function nonEmpty(stream: Readable): Promise<Readable | undefined> {
  if (stream.readableEnded) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      cleanup();
      stream.pause();
      stream.unshift(chunk);
      resolve(stream);
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const onError = (e: unknown) => {
      cleanup();
      reject(e);
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

function multipartError(err: unknown, field: string): unknown {
  if (err instanceof MulterError) {
    switch (err.code) {
      case 'LIMIT_UNEXPECTED_FILE':
        return new InvalidArgumentError(field, `Invalid parameter '${field}': unexpected file part '${err.field}'; send exactly one file, in the part named '${field}'`, 'UNEXPECTED_FILE');
      case 'LIMIT_FILE_COUNT':
        return new InvalidArgumentError(field, `Invalid parameter '${field}': send exactly one file, in the part named '${field}'`, 'TOO_MANY_FILES');
      case 'LIMIT_FIELD_COUNT':
      case 'LIMIT_PART_COUNT':
        return new InvalidArgumentError('body', `Too many multipart parts (at most ${MULTIPART_LIMITS.parts} parts and ${MULTIPART_LIMITS.fields} fields)`, 'TOO_MANY_PARTS');
      case 'LIMIT_FIELD_KEY':
      case 'LIMIT_FIELD_VALUE':
        return new PayloadTooLargeError(`Multipart ${err.field ? `field '${err.field}'` : 'field name'} exceeds its size limit`, {
          parameter: err.field ?? 'body',
          limit: err.code === 'LIMIT_FIELD_KEY' ? MULTIPART_LIMITS.fieldNameSize : MULTIPART_LIMITS.fieldSize,
        });
      default:
        return new InvalidArgumentError('body', `Malformed multipart body: ${err.message}`, 'MALFORMED_MULTIPART');
    }
  }
  const message = (err as Error | undefined)?.message ?? '';
  // The client went away mid-upload: nobody will read the answer, but it is not a server fault worth an error log.
  if (message === 'Request aborted' || message === 'Request closed') {
    return new InvalidArgumentError('body', 'The request body ended before the upload was complete', 'INCOMPLETE_BODY');
  }
  if (/boundary not found/i.test(message)) {
    return new InvalidArgumentError('boundary', "Invalid parameter 'boundary': multipart/form-data needs a boundary parameter in Content-Type", 'MISSING_BOUNDARY');
  }
  // busboy's parse errors ('Unexpected end of form', 'Malformed part header', ...) are client mistakes.
  if (/^(Unexpected end of|Malformed|Multipart:)/.test(message)) {
    return new InvalidArgumentError('body', `Malformed multipart body: ${message}`, 'MALFORMED_MULTIPART');
  }
  return err;
}
