import type { Actor } from './connector';

/** Where a document goes: the folder it is filed in after the move, and its name there. */
export interface MoveDestination {
  folderId: string;
  fileName: string;
}

/**
 * Moves or renames a document inside one repository, keeping its content, versions and
 * properties (sync jobs: a document moved or renamed at the source is moved at the target,
 * not copied again). Filesystem: a rename; CMIS: `move` then `update cmis:name`.
 */
export interface MoveCapability {
  /**
   * Files document `id` in `to.folderId` under `to.fileName` (either may equal today's). Answers
   * the document's id after the move: the same on repositories with stable ids, the new path's
   * on those whose ids are paths (the filesystem). A name taken in the destination is a
   * ConflictError (`ALREADY_EXISTS`); nothing is overwritten.
   */
  moveItem(id: string, to: MoveDestination, actor: Actor): Promise<string>;
}
