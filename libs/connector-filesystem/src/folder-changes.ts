import { lstatSync, mkdirSync, renameSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { ConflictError, type Actor, type FolderCapability } from '@gateway/connector-api';
import { isUnknownType } from './folder-listing';
import { errnoCode, mapFsError } from './fs-errors';
import { encodeId, invalid, joinRel, parentOf, parseFolderPath, repoPath } from './paths';
import { checkedOutError, type RepositoryFiles } from './repository-files';

/** The folders group: folders made and deleted by path (never by id; the root cannot be deleted). */
export class FolderChanges implements Required<FolderCapability> {
  constructor(private readonly files: RepositoryFiles) {}

  async createFolder(folderPath: string, _actor: Actor): Promise<string> {
    if (folderPath === '') throw invalid('path', 'must be the absolute path of a folder');
    const rel = parseFolderPath(folderPath, 'path');
    // One segment at a time with lstat, instead of mkdir -p, which would follow a link in the middle of the path.
    // Synchronous, as the lstat: a job's first documents of a folder wait for it, and a round trip through
    // the pool per segment waited for a busy event loop (~10 ms at the start of a job, decision 0015).
    let current = '';
    for (const segment of rel === '' ? [] : rel.split('/')) {
      current = joinRel(current, segment);
      const abs = this.files.abs(current);
      try {
        mkdirSync(abs);
      } catch (e) {
        if (errnoCode(e) !== 'EEXIST') throw mapFsError(e, repoPath(current), 'path');
      }
      let stat;
      try {
        stat = lstatSync(abs);
      } catch (e) {
        throw mapFsError(e, repoPath(current), 'path');
      }
      if (!stat.isDirectory()) {
        throw new ConflictError(`'${repoPath(current)}' exists and is not a folder`, 'ALREADY_EXISTS', { path: repoPath(current) });
      }
    }
    return encodeId(rel);
  }

  async deleteFolder(folderPath: string, actor: Actor): Promise<string> {
    const rel = parseFolderPath(folderPath, 'path');
    if (rel === '') throw invalid('path', 'the root folder cannot be deleted');
    const display = repoPath(rel);
    const folder = await this.files.locate(rel, display);
    if (!folder.stat.isDirectory()) throw invalid('path', `'${display}' is a document; documents are deleted by id`);
    const folders = await this.subfolders(rel);
    for (const f of folders) this.assertNoForeignCheckOut(f, actor);
    try {
      // Renamed into the trash first, so the folder disappears at once rather
      // than emptying file by file while others list it.
      await this.files.locate(rel, display);
      let doomed = await this.files.store.trashEntry();
      try {
        renameSync(folder.abs, doomed);
      } catch (e) {
        if (errnoCode(e) !== 'EXDEV' && errnoCode(e) !== 'EBUSY') throw e;
        doomed = folder.abs; // a mount point: delete in place
      }
      await this.files.store.removeFolderTree(rel, folders);
      await fsp.rm(doomed, { recursive: true, force: true });
    } catch (e) {
      throw mapFsError(e, display, 'path');
    }
    return encodeId(rel);
  }

  /** The folder and every folder below it, without following links. */
  private async subfolders(rel: string): Promise<string[]> {
    const folders = [rel];
    for (let i = 0; i < folders.length; i++) {
      let entries;
      try {
        entries = await fsp.readdir(this.files.abs(folders[i]), { withFileTypes: true });
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') continue;
        throw mapFsError(e, repoPath(folders[i]), 'path');
      }
      for (const entry of entries) {
        const child = joinRel(folders[i], entry.name);
        if (entry.isDirectory()) folders.push(child);
        else if (isUnknownType(entry) && (await fsp.lstat(this.files.abs(child)).catch(() => undefined))?.isDirectory()) folders.push(child);
      }
    }
    return folders;
  }

  private assertNoForeignCheckOut(folderRel: string, actor: Actor): void {
    for (const meta of this.files.store.recordsIn(folderRel)) {
      if (meta.checkedOutBy === undefined || meta.checkedOutBy === actor.username) continue;
      if (parentOf(meta.path) !== folderRel) continue;
      // A record whose file was deleted by hand holds nothing.
      if (!this.files.existsQuietly(meta.path)) continue;
      throw checkedOutError(meta.checkedOutBy, meta.path);
    }
  }
}
