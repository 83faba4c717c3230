import { STAMP_FIELDS, toPrecision, type Actor, type ContentConnector, type ItemInfo, type StampField, type VersionInfo, type VersionStamp } from '@gateway/connector-api';
import { SOURCE_STAMP_PROPERTIES, carriedStamp, propertyRoute, stampProperties, type PropertyRoute } from './version-stamp-properties';

/**
 * The original dates and authors of each version a `copyVersions` job writes (issue 33 §2, decision 0094).
 * The source says who made each version and when (its version list, and the document for its creation);
 * the target keeps them as its own fields where its `versionStamps` group says it can: with the write
 * (NewFile/NewContent.stamp) or set on the version just written (`stampWritten`, adding no version). What it
 * cannot keep is said in the document's outcome (`note`), never dropped silently. A version's date and author
 * it cannot keep as fields go to that version's properties `source_modified`, `source_author`, `source_version`
 * where its versions have properties of their own (CMIS; decision 0105); a source's versions that carry them
 * give their original rather than the intermediate repository's write, so a chain of copies keeps it.
 */
export class VersionStamps {
  /** Stamps the target refused after the write, by target id: said in the document's outcome (`warningFor`). */
  private readonly refused = new Map<string, string>();
  /** The source's version label of each planned stamp (source_version), by the stamp. */
  private readonly labels = new WeakMap<VersionStamp, string>();
  /** Whether the version's date and author go to its properties: asked of the target once per run. */
  private route?: Promise<PropertyRoute>;

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
    const planned = (id: string, stamp: VersionStamp, label: string | undefined) => {
      stamps.set(id, stamp);
      if (label) this.labels.set(stamp, label);
    };
    if (!versions || versions.length === 0) {
      // A copy of a copy carries its original in its properties (source_modified, ...): that, not the copy's write.
      const carried = carriedStamp(doc.properties);
      planned(documentId, { ...created, ...modifiedOf(doc), ...withoutLabel(carried) }, carried.version ?? doc.versionLabel);
    } else {
      versions.forEach((v, i) => {
        const carried = carriedStamp(v.properties);
        // The newest version is the document: its author is the document's last writer where the list has none.
        const modifiedBy = carried.modifiedBy ?? v.modifiedBy ?? (i === 0 ? doc.modifiedBy : undefined);
        planned(v.id, { ...created, modified: carried.modified ?? v.modified, ...(modifiedBy ? { modifiedBy } : {}) }, carried.version ?? v.label);
      });
    }
    const empty = this.target.versionStamps?.stampsEmptyContent === false && (versions ?? [doc]).some((v) => v.size === 0);
    const emptyNote = empty ? `copyVersions: connector ${this.target.id} keeps no dates for an empty version; those of the write stand` : undefined;
    return { stamps, note: [await this.note(), emptyNote].filter(Boolean).join('; ') || undefined };
  }

  /** What the target keeps of no stamp, as the outcome says it; undefined when it keeps every field. */
  async note(): Promise<string | undefined> {
    const group = this.target.versionStamps;
    const left = STAMP_FIELDS.filter((f) => !group?.keeps.includes(f));
    if (left.length === 0) return undefined;
    const kept = group ? ` (it keeps ${group.keeps.join(', ')})` : '';
    const perVersion = left.filter((f) => PER_VERSION.includes(f));
    const route = perVersion.length > 0 ? await this.propertyRoute() : undefined;
    if (route?.write) {
      const still = left.filter((f) => !PER_VERSION.includes(f));
      const lost = still.length > 0 ? `; it cannot keep the original ${still.join(', ')}, whose values are those of the write` : '';
      return `copyVersions: connector ${this.target.id} keeps each version's original ${perVersion.join(', ')} and label as its properties ${SOURCE_STAMP_PROPERTIES.join(', ')}${kept}${lost}`;
    }
    const why = route ? ` (as properties neither: ${route.why})` : '';
    return `copyVersions: connector ${this.target.id} cannot keep the original ${left.join(', ')}${kept}; the target's own values are those of the write${why}`;
  }

  /** What goes with the write itself (NewFile/NewContent.stamp), for a target that takes it there. */
  withWrite(stamp: VersionStamp | undefined): { stamp?: VersionStamp } {
    const group = this.target.versionStamps;
    return stamp && group && !group.stampWritten ? { stamp } : {};
  }

  /**
   * Sets the stamp on the version just written, for a target that sets it after the write; and the version's
   * date, author and source label as its properties where the target keeps them so (not as fields).
   */
  async afterWrite(targetId: string, stamp: VersionStamp | undefined, actor: Actor): Promise<void> {
    const group = this.target.versionStamps;
    if (!stamp) return;
    try {
      if (group?.stampWritten) await group.stampWritten(targetId, stamp, actor);
      if (group?.keeps.includes('modified') && group.keeps.includes('modifiedBy')) return;
      if (!(await this.propertyRoute()).write) return;
      const properties = stampProperties(stamp, this.labels.get(stamp));
      if (Object.keys(properties).length > 0) await this.target.propertyUpdate!.updateProperties(targetId, properties, actor);
    } catch (e) {
      // The version is written and checked: a refused stamp is a warning, not a failed copy.
      this.refused.set(targetId, `copyVersions: the original dates and authors were not kept (${errorText(e)})`);
    }
  }

  /**
   * Whether the target's document was written by an earlier attempt of this run (a redo after a crash): its
   * date is at or after `since`, or, where the target keeps the original dates, it is the one the newest
   * version was stamped with (to the target's precision): the write time is not what the target reports then.
   */
  writtenSince(targetModified: Date | undefined, newest: VersionStamp | undefined, since: number): boolean {
    const modified = targetModified?.getTime() ?? 0;
    if (modified >= since) return true;
    const group = this.target.versionStamps;
    if (!group?.keeps.includes('modified') || !newest?.modified) return false;
    return modified === toPrecision(newest.modified, group.precisionMs).getTime();
  }

  private propertyRoute(): Promise<PropertyRoute> {
    this.route ??= propertyRoute(this.target).catch((e: unknown) => {
      this.route = undefined;
      throw e;
    });
    return this.route;
  }

  /** The warning of a stamp the target refused for this document, once. */
  warningFor(targetId: string): string | undefined {
    const warning = this.refused.get(targetId);
    this.refused.delete(targetId);
    return warning;
  }
}

/** The fields that differ from version to version: those the properties keep. */
const PER_VERSION: readonly StampField[] = ['modified', 'modifiedBy'];

function withoutLabel({ version: _version, ...stamp }: { version?: string } & VersionStamp): VersionStamp {
  return stamp;
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function modifiedOf(doc: ItemInfo): VersionStamp {
  return { ...(doc.modified ? { modified: doc.modified } : {}), ...(doc.modifiedBy ? { modifiedBy: doc.modifiedBy } : {}) };
}
