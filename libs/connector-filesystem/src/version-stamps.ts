import { lstatSync, utimesSync } from 'node:fs';
import type { Actor, StampField, VersionStamp, VersionStampCapability } from '@gateway/connector-api';
import { identityOf, latestVersion } from './metadata-store';
import { assertNotHeldByOther, type RepositoryFiles } from './repository-files';

/**
 * The `versionStamps` group: a copied version keeps its original dates and authors. The modification date
 * is the file's mtime (utimes; to the millisecond, as the connector reports dates) and the version's record;
 * the creation date and both authors live in the records database, as the gateway's own writes do. Set
 * after the write, on the current version: no version is added.
 */
export class VersionStampsOnFiles implements VersionStampCapability {
  readonly keeps: readonly StampField[] = ['created', 'modified', 'createdBy', 'modifiedBy'];
  readonly precisionMs = 1;

  constructor(private readonly files: RepositoryFiles) {}

  async stampWritten(id: string, stamp: VersionStamp, actor: Actor): Promise<void> {
    const doc = await this.files.writableDocument(id, 'id');
    await this.files.mutate(doc.rel, id, 'id', async ({ abs, stat, meta }) => {
      assertNotHeldByOther(meta, actor, doc.rel);
      const latest = latestVersion(meta);
      if (stamp.created) meta.created = stamp.created.toISOString();
      if (stamp.createdBy) meta.createdBy = stamp.createdBy;
      if (stamp.modifiedBy) latest.modifiedBy = stamp.modifiedBy;
      if (stamp.modified) {
        const known = this.files.written.lookUp(stat);
        // Seconds as a double: half a millisecond more, so the float's error cannot fall below the millisecond meant.
        const seconds = (stamp.modified.getTime() + 0.5) / 1000;
        utimesSync(abs, seconds, seconds);
        const stamped = lstatSync(abs, { bigint: true });
        // The record follows the file, or the next read would take the new mtime for an edit by hand.
        meta.current = identityOf(stamped);
        latest.modified = stamp.modified.toISOString();
        if (known) this.files.written.remember(stamped, known);
      }
      await this.files.store.write(doc.rel, meta);
    });
  }
}
