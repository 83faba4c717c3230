import { lstatSync, mkdirSync, renameSync } from 'node:fs';
import * as path from 'node:path';
import { ConflictError, type Actor, type MoveCapability, type MoveDestination } from '@gateway/connector-api';
import { errnoCode } from './fs-errors';
import { unlinkIfPresent } from './metadata-store';
import { encodeId, joinRel, parseName } from './paths';
import { assertNotHeldByOther, documentLocks, placeNew, type RepositoryFiles } from './repository-files';

/**
 * The move group: a document renamed into another folder or name with its history (the record
 * and older versions move with it). Ids are paths, so the id changes; sync jobs know that.
 */
export class DocumentMoves implements MoveCapability {
  constructor(private readonly files: RepositoryFiles) {}

  async moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string> {
    const doc = await this.files.writableDocument(id, 'id');
    const folder = await this.files.locateFolder(to.folderId, 'folderId');
    const newRel = joinRel(folder.rel, parseName(to.fileName, 'fileName', folder.rel));
    if (newRel === doc.rel) return encodeId(newRel);
    const newAbs = this.files.abs(newRel);
    const store = this.files.store;
    return documentLocks.run(newAbs, () =>
      this.files.mutate(doc.rel, id, 'id', async ({ abs, meta }) => {
        assertNotHeldByOther(meta, actor, doc.rel);
        // A second link first: a name taken meanwhile is refused (EEXIST), never replaced; the old name goes last.
        try {
          placeNew(abs, newAbs, newRel);
        } catch (e) {
          // Both names already link this file: a move cut by a crash before it unlinked the old one. It is finished now.
          if (!(e instanceof ConflictError) || !sameFile(abs, newAbs)) throw e;
        }
        const oldVersions = store.documentDir(doc.rel);
        if (exists(oldVersions)) {
          const newVersions = store.documentDir(newRel);
          mkdirSync(path.dirname(newVersions), { recursive: true });
          renameSync(oldVersions, newVersions);
        }
        await store.write(newRel, { ...meta, path: newRel });
        unlinkIfPresent(abs);
        await store.remove(doc.rel);
        return encodeId(newRel);
      }),
    );
  }
}

function sameFile(a: string, b: string): boolean {
  const sa = lstatSync(a, { bigint: true });
  const sb = lstatSync(b, { bigint: true });
  return sa.ino === sb.ino && sa.dev === sb.dev;
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw e;
  }
}
