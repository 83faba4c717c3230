import { Injectable } from '@nestjs/common';
import { ConflictError, GoneError, NotFoundError, type ByteRange } from '@gateway/connector-api';
import { DownloadLinksRepository, UserFilesRepository, type UserFileRecord } from '@gateway/persistence';
import type { Readable } from 'node:stream';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { Clock } from '../common/clock';
import type { DownloadSource } from '../common/download';
import { DownloadOffload } from '../common/offload';
import { ExportRunner } from './export-runner';
import { INTERNAL_CONNECTOR_ID, type UserFileDto, type UserFilesListDto } from './files.dto';
import { toLinkDto, toUserFileDto } from './files.mapping';
import { LocalUserFileStore, UserFileStore } from './user-file.store';

/** Who asks for a file's bytes: its owner, or anyone holding a link to it. */
export type Requester = 'owner' | 'link';

/**
 * Spec 4.1, user files: list, download, delete, stop. A file or link of
 * another user answers 404, exactly as one that does not exist.
 */
@Injectable()
export class UserFilesService {
  constructor(
    private readonly files: UserFilesRepository,
    private readonly links: DownloadLinksRepository,
    private readonly store: UserFileStore,
    private readonly runner: ExportRunner,
    private readonly clock: Clock,
    private readonly offload: DownloadOffload,
  ) {}

  async list(user: AuthenticatedUser): Promise<UserFilesListDto> {
    const [files, links] = await Promise.all([this.files.listByOwner(user.username), this.links.listByOwner(user.username)]);
    return { files: files.map(toUserFileDto), links: links.map(toLinkDto) };
  }

  async download(user: AuthenticatedUser, id: string): Promise<DownloadSource> {
    return this.contentSource(await this.requireOwned(user, id), 'owner');
  }

  /**
   * What the download helper needs to serve a complete user file. While the
   * export runs: 409 EXPORT_NOT_READY. A failed or stopped export: 409 for its
   * owner, 410 through a link (that link can never deliver).
   */
  async contentSource(file: UserFileRecord, requester: Requester, options: { fileName?: string; onOpen?: (range?: ByteRange) => Promise<void> } = {}): Promise<DownloadSource> {
    if (file.state === 'running') {
      throw new ConflictError(`Export '${file.id}' is not ready yet; the file list shows its progress`, 'EXPORT_NOT_READY', {
        id: file.id,
        entriesDone: file.entriesDone,
        entriesTotal: file.entriesTotal,
      });
    }
    if (file.state !== 'ready') {
      const code = file.state === 'stopped' ? 'EXPORT_STOPPED' : 'EXPORT_FAILED';
      const message = `Export '${file.id}' ${file.state === 'stopped' ? 'was stopped' : 'failed'}${file.message ? `: ${file.message}` : ''}`;
      throw requester === 'owner' ? new ConflictError(message, code, { id: file.id }) : new GoneError(message, code, { id: file.id });
    }
    const store = this.store;
    const stat = await store.stat(file.id);
    return {
      size: stat.size,
      mimeType: file.mimeType,
      fileName: options.fileName || file.fileName,
      // The bytes of a ready file never change: id and size identify them.
      etag: `${file.id}-${stat.size}`,
      lastModified: new Date(file.completedAt ?? stat.modified.getTime()),
      open: async (range?: ByteRange): Promise<Readable> => {
        const stream = await this.store.openRead(file.id, range);
        if (options.onOpen) {
          try {
            await options.onOpen(range);
          } catch (e) {
            stream.destroy();
            throw e;
          }
        }
        return stream;
      },
      // Only files on a local folder can be handed to the proxy; an S3 store streams through the gateway.
      handOff:
        this.offload.enabled && store instanceof LocalUserFileStore
          ? (range) => this.offload.handOff({ area: 'files', root: store.dir, path: store.localPath(file.id) }, options.onOpen, range)
          : undefined,
      identity: { connectorId: INTERNAL_CONNECTOR_ID, documentId: file.id, path: file.fileName },
    };
  }

  /**
   * Deletes the handle, its bytes and the internal links to it; a running
   * export is stopped first. Returns the handle as it was. A download that
   * already has the file open finishes; later ones get 404.
   */
  async delete(user: AuthenticatedUser, id: string): Promise<UserFileDto> {
    const found = await this.requireOwned(user, id);
    let file = found;
    if (found.state === 'running') {
      await this.stopRunning(found);
      file = await this.requireOwned(user, id);
    }
    if (!(await this.files.delete(id, user.username))) throw new NotFoundError('file', id);
    // A running export's partial file is discarded by stopRunning, or left to the node building it.
    if (found.state !== 'running' || file.state === 'ready') await this.store.remove(id);
    return toUserFileDto(file);
  }

  /**
   * Spec "Stop user file": 0 when the export was stopped (or had already
   * stopped or failed); the completed size when it completed before the stop
   * took effect; 409 EXPORT_COMPLETE, changing nothing, when it was complete
   * already.
   */
  async stop(user: AuthenticatedUser, id: string): Promise<number> {
    const file = await this.requireOwned(user, id);
    if (file.state === 'ready') {
      throw new ConflictError(`Export '${id}' is already complete; there is nothing to stop`, 'EXPORT_COMPLETE', { id, size: file.size });
    }
    if (file.state !== 'running') return 0;
    return this.stopRunning(file);
  }

  private async stopRunning(file: UserFileRecord): Promise<number> {
    const outcome = await this.runner.stop(file.id);
    if (outcome) return outcome.state === 'ready' ? outcome.size : 0;
    // No job here: it just finished, it has not started yet (its row is written first), or another node builds it.
    if (await this.files.markEnded(file.id, 'stopped', this.clock.now(), 'Stopped')) {
      await this.runner.discardPartial(file);
      return 0;
    }
    const current = await this.files.find(file.id);
    return current?.state === 'ready' ? current.size : 0;
  }

  async requireOwned(user: AuthenticatedUser, id: string): Promise<UserFileRecord> {
    const file = await this.files.findOwned(id, user.username);
    if (!file) throw new NotFoundError('file', id);
    return file;
  }
}
