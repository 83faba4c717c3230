import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

/** One form field: a name and its value (strings are sent as UTF-8). */
export type FormField = [name: string, value: string];

export interface MultipartFile {
  /** Form field name of the file part (the browser binding reads `content`). */
  field: string;
  fileName: string;
  mimeType: string;
  content: Readable;
}

export interface MultipartBody {
  contentType: string;
  /** The body as it is produced: headers, then the file as it is read, then the trailer. */
  body: AsyncIterable<Uint8Array>;
}

export interface MultipartHooks {
  /** Called for every chunk handed to the transport (keeps an idle timer alive). */
  onChunk?: () => void;
  /** Called once when the file stream fails: the upload is then aborted. */
  onSourceError?: (e: unknown) => void;
}

/**
 * A multipart/form-data body built as a stream: the fields and the file part's
 * headers, then the file's own chunks as they arrive, then the closing
 * boundary. Nothing of the file is buffered beyond the chunk in flight, so an
 * upload of any size uses constant memory and the repository starts receiving
 * before the client has finished sending.
 */
export function multipartBody(fields: FormField[], file: MultipartFile, hooks: MultipartHooks = {}): MultipartBody {
  const boundary = `----content-gateway-${randomBytes(12).toString('hex')}`;
  let head = '';
  for (const [name, value] of fields) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`;
  }
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.fileName)}"\r\n` +
    `Content-Type: ${file.mimeType.replace(/[\r\n]/g, '')}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;

  async function* produce(): AsyncGenerator<Uint8Array> {
    hooks.onChunk?.();
    yield Buffer.from(head, 'utf8');
    try {
      for await (const chunk of file.content) {
        hooks.onChunk?.();
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Uint8Array);
        // An empty chunk is not handed on: Node 20's fetch sent the body of a stream with one empty Buffer and
        // its trailer never, and the upload waited for the idle time-out (cmis-client.upload.spec.ts).
        if (bytes.byteLength > 0) yield bytes;
      }
    } catch (e) {
      hooks.onSourceError?.(e);
      throw e;
    }
    hooks.onChunk?.();
    yield Buffer.from(tail, 'utf8');
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: produce() };
}

/** Quoted-string content of a Content-Disposition parameter: no quotes, backslashes or line breaks. */
function quote(value: string): string {
  return value.replace(/[\r\n]/g, ' ').replace(/["\\]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}
