import { STAMP_FIELDS, type Actor, type ContentConnector, type ItemInfo, type VersionInfo, type VersionStamp } from '@gateway/connector-api';

/**
 * The original dates and authors of each version a `copyVersions` job writes (issue 33 §2, decision 0094).
 * The source says who made each version and when (its version list, and the document for its creation);
 * the target keeps them as its own fields where its `versionStamps` group says it can: with the write
 * (NewFile/NewContent.stamp) or set on the version just written (`stampWritten`, adding no version). What it
 * cannot keep is said in the document's outcome (`note`), never dropped silently.
 */
export class VersionStamps {
  /** Stamps the target refused after the write, by target id: said in the document's outcome (`warningFor`). */
  private readonly refused = new Map<string, string>();

  constructor(
    private readonly source: ContentConnector,
    private readonly target: ContentConnector,
  ) {}

  /**
   * The stamp of each source id to be written (`versions` newest first, as listVersions answers; none: a
   * one-version history, the document itself), and the note of what the target leaves out.
   */
  async plan(documentId: string, versions: readonly VersionInfo[] | undefined): Promise<{ stamps: Map<string, VersionStamp>; note?: string }> {
    const doc = await this.source.getItem(documentId);
    const stamps = new Map<string, VersionStamp>();
    const created = { ...(doc.created ? { created: doc.created } : {}), ...(doc.createdBy ? { createdBy: doc.createdBy } : {}) };
    if (!versions || versions.length === 0) {
      stamps.set(documentId, { ...created, ...modifiedOf(doc) });
    } else {
      versions.forEach((v, i) => {
        // The newest version is the document: its author is the document's last writer where the list has none.
        const modifiedBy = v.modifiedBy ?? (i === 0 ? doc.modifiedBy : undefined);
        stamps.set(v.id, { ...created, modified: v.modified, ...(modifiedBy ? { modifiedBy } : {}) });
      });
    }
    const empty = this.target.versionStamps?.stampsEmptyContent === false && (versions ?? [doc]).some((v) => v.size === 0);
    const emptyNote = empty ? `copyVersions: connector ${this.target.id} keeps no dates for an empty version; those of the write stand` : undefined;
    return { stamps, note: [this.note(), emptyNote].filter(Boolean).join('; ') || undefined };
  }

  /** What the target keeps of no stamp, as the outcome says it; undefined when it keeps every field. */
  note(): string | undefined {
    const group = this.target.versionStamps;
    const left = STAMP_FIELDS.filter((f) => !group?.keeps.includes(f));
    if (left.length === 0) return undefined;
    const kept = group ? ` (it keeps ${group.keeps.join(', ')})` : '';
    return `copyVersions: connector ${this.target.id} cannot keep the original ${left.join(', ')}${kept}; the target's own values are those of the write`;
  }

  /** What goes with the write itself (NewFile/NewContent.stamp), for a target that takes it there. */
  withWrite(stamp: VersionStamp | undefined): { stamp?: VersionStamp } {
    const group = this.target.versionStamps;
    return stamp && group && !group.stampWritten ? { stamp } : {};
  }

  /** Sets the stamp on the version just written, for a target that sets it after the write. */
  async afterWrite(targetId: string, stamp: VersionStamp | undefined, actor: Actor): Promise<void> {
    const group = this.target.versionStamps;
    if (!stamp || !group?.stampWritten) return;
    try {
      await group.stampWritten(targetId, stamp, actor);
    } catch (e) {
      // The version is written and checked: a refused stamp is a warning, not a failed copy.
      this.refused.set(targetId, `copyVersions: the original dates and authors were not kept (${errorText(e)})`);
    }
  }

  /** The warning of a stamp the target refused for this document, once. */
  warningFor(targetId: string): string | undefined {
    const warning = this.refused.get(targetId);
    this.refused.delete(targetId);
    return warning;
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function modifiedOf(doc: ItemInfo): VersionStamp {
  return { ...(doc.modified ? { modified: doc.modified } : {}), ...(doc.modifiedBy ? { modifiedBy: doc.modifiedBy } : {}) };
}
