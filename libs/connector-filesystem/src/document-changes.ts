import { constants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import {
  ConflictError,
  NotFoundError,
  declaredMimeType,
  type Actor,
  type CheckInOutCapability,
  type ContentUpdateCapability,
  type NewContent,
  type PropertyUpdateCapability,
  type VersionInfo,
  type VersioningCapability,
} from '@gateway/connector-api';
import { versionList } from './item-info';
import { latestVersion, unlinkIfPresent } from './metadata-store';
import { encodeId, invalid, repoPath } from './paths';
import { parsePropertyChanges } from './properties';
import { assertNotHeldByOther, type RepositoryFiles } from './repository-files';

const MAX_COMMENT_LENGTH = 4000;

/**
 * The groups that change one existing document under its lock (RepositoryFiles.mutate), and its
 * history: contentUpdate, versioning, checkInOut, propertyUpdate. Every updateContent and checkIn
 * adds a version; a version id is accepted only when it names the current version.
 */
export class DocumentChanges implements ContentUpdateCapability, VersioningCapability, CheckInOutCapability, PropertyUpdateCapability {
  constructor(private readonly files: RepositoryFiles) {}

  async listVersions(id: string): Promise<VersionInfo[]> {
    const doc = await this.files.locateDocument(id, 'id');
    const meta = await this.files.currentMeta(doc);
    if (doc.version !== undefined && !meta.versions.some((v) => v.n === doc.version)) throw new NotFoundError('item', id);
    return versionList(doc.rel, meta);
  }

  async updateContent(id: string, input: NewContent, actor: Actor): Promise<string> {
    const doc = await this.files.writableDocument(id, 'fileId');
    // Refuse a foreign check-out before reading the upload; checked again under the lock.
    const early = this.files.store.read(doc.rel);
    if (early) assertNotHeldByOther(early, actor, doc.rel);
    const staged = await this.files.stage(input.content, id);
    try {
      return await this.files.mutate(doc.rel, id, 'fileId', async ({ abs, meta }) => {
        assertNotHeldByOther(meta, actor, doc.rel);
        const mimeType = declaredMimeType(input.mimeType) ?? latestVersion(meta).mimeType;
        await this.files.commitVersion(doc.rel, abs, meta, staged, { modifiedBy: actor.username, mimeType });
        return encodeId(doc.rel);
      });
    } finally {
      unlinkIfPresent(staged);
    }
  }

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    const changes = parsePropertyChanges(properties);
    const doc = await this.files.writableDocument(id, 'fileId');
    return this.files.mutate(doc.rel, id, 'fileId', async ({ meta }) => {
      assertNotHeldByOther(meta, actor, doc.rel);
      for (const [name, value] of changes) {
        if (value === '') delete meta.properties[name];
        else meta.properties[name] = value;
      }
      await this.files.store.write(doc.rel, meta);
      return encodeId(doc.rel);
    });
  }

  async checkOut(id: string, actor: Actor): Promise<string> {
    const doc = await this.files.writableDocument(id, 'id');
    return this.files.mutate(doc.rel, id, 'id', async ({ meta }) => {
      // Checking out again as the holder is a no-op, so a retried request does not fail.
      if (meta.checkedOutBy === actor.username) return encodeId(doc.rel);
      assertNotHeldByOther(meta, actor, doc.rel);
      meta.checkedOutBy = actor.username;
      meta.checkedOutAt = new Date().toISOString();
      await this.files.store.write(doc.rel, meta);
      return encodeId(doc.rel);
    });
  }

  async checkIn(id: string, actor: Actor, comment?: string): Promise<string> {
    if (comment !== undefined && (typeof comment !== 'string' || comment.length > MAX_COMMENT_LENGTH)) {
      throw invalid('comment', `must be a text of at most ${MAX_COMMENT_LENGTH} characters`);
    }
    const doc = await this.files.writableDocument(id, 'id');
    return this.files.mutate(doc.rel, id, 'id', async ({ abs, meta }) => {
      if (meta.checkedOutBy === undefined) {
        throw new ConflictError(`Document '${repoPath(doc.rel)}' is not checked out`, 'NOT_CHECKED_OUT', { path: repoPath(doc.rel) });
      }
      assertNotHeldByOther(meta, actor, doc.rel);
      // The new version is a copy, not a second link to the live file: a
      // version must not share its inode with a file that can be edited in
      // place by hand, or history would change with it.
      const copy = this.files.store.tempFile('checkin');
      try {
        await fsp.copyFile(abs, copy, constants.COPYFILE_FICLONE);
        delete meta.checkedOutBy;
        delete meta.checkedOutAt;
        await this.files.commitVersion(doc.rel, abs, meta, copy, {
          modifiedBy: actor.username,
          mimeType: latestVersion(meta).mimeType,
          comment: comment === '' ? undefined : comment,
        });
      } finally {
        unlinkIfPresent(copy);
      }
      return encodeId(doc.rel);
    });
  }
}
