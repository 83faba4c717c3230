import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { ChunkReader, type Chunk } from './chunks';
import { literal, query, readEntity, readPrimitive, str } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** Uploads of createFile and updateContent: one request, or SharePoint's chunked upload session. */
export class SharePointUpload {
  constructor(private readonly connector: SharePointConnector) {}

  /**
   * Sends content to a file: small (≤ chunkThresholdBytes) in one request, bigger through
   * StartUpload/ContinueUpload/FinishUpload in chunkSizeBytes chunks, one held at a time in the one
   * buffer the reader allocates for the whole upload (README: memory). `create` makes
   * the file for a small upload; for a big one the file must exist before StartUpload, so it makes an
   * empty one first and removes it again if the upload fails.
   */
  async sendContent(
    content: Readable,
    target: { create?: { folder: string; name: string }; uid?: string },
    id: string,
  ): Promise<string> {
    const reader = new ChunkReader(content, Math.max(this.connector.params.chunkThresholdBytes + 1, this.connector.params.chunkSizeBytes));
    try {
      const first = await reader.next(this.connector.params.chunkThresholdBytes + 1);
      if (first.last && first.chunk.length <= this.connector.params.chunkThresholdBytes) {
        if (target.create) {
          const q = query({ '@f': literal(target.create.folder), '@n': literal(target.create.name) });
          const created = readEntity(await this.connector.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl=@n,overwrite=false)${q}`, { body: first.chunk, errorContext: { id, parameter: 'folderId' } }));
          return (str(created, 'UniqueId') ?? '').toLowerCase();
        }
        await this.connector.post(`web/GetFileById(${literal(target.uid!)})/$value`, { body: first.chunk, headers: { 'x-http-method': 'PUT' }, errorContext: { id } });
        return target.uid!;
      }
      let uid = target.uid;
      let stub = false;
      if (target.create) {
        const q = query({ '@f': literal(target.create.folder), '@n': literal(target.create.name) });
        const created = readEntity(await this.connector.post(`web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl=@n,overwrite=false)${q}`, { body: Buffer.alloc(0), errorContext: { id, parameter: 'folderId' } }));
        uid = (str(created, 'UniqueId') ?? '').toLowerCase();
        stub = true;
      }
      const file = `web/GetFileById(${literal(uid!)})`;
      const uploadId = randomUUID();
      let started = false;
      try {
        // The first read took threshold+1 bytes; the rest goes in chunkSizeBytes pieces.
        let pending: Chunk = first;
        let offset = 0;
        for (;;) {
          const op = !started ? (pending.last ? null : 'StartUpload') : pending.last ? 'FinishUpload' : 'ContinueUpload';
          if (op === null) {
            // Everything fit in the first read after all (only when threshold < chunk): one FinishUpload after an empty start.
            await this.connector.post(`${file}/StartUpload(uploadId=guid'${uploadId}')`, { body: Buffer.alloc(0), errorContext: { id } });
            started = true;
            continue;
          }
          const path = op === 'StartUpload' ? `${file}/StartUpload(uploadId=guid'${uploadId}')` : `${file}/${op}(uploadId=guid'${uploadId}',fileOffset=${offset})`;
          const answer = await this.connector.post(path, { body: pending.chunk, errorContext: { id } });
          started = true;
          if (op === 'FinishUpload') break;
          offset = Number(readPrimitive(answer, op) ?? offset + pending.chunk.length);
          pending = await reader.next(this.connector.params.chunkSizeBytes);
        }
      } catch (e) {
        if (started) await this.connector.post(`${file}/CancelUpload(uploadId=guid'${uploadId}')`).catch(() => undefined);
        if (stub) await this.connector.post(`${file}`, { headers: { 'x-http-method': 'DELETE', 'if-match': '*' } }).catch(() => undefined);
        throw e;
      }
      return uid!;
    } finally {
      await reader.close().catch(() => undefined);
    }
  }
}
