import type { ContentConnector, VersionStamp } from '@gateway/connector-api';

/**
 * The properties that keep a version's original date, author and label on a target that cannot keep them as
 * its own fields (issue 33 §2, decision 0105): written on each version a copy job writes, and read back from
 * each version of a source that carries them, so a chain of copies keeps the originals.
 */
export const SOURCE_MODIFIED = 'source_modified';
export const SOURCE_AUTHOR = 'source_author';
export const SOURCE_VERSION = 'source_version';
export const SOURCE_STAMP_PROPERTIES = [SOURCE_MODIFIED, SOURCE_AUTHOR, SOURCE_VERSION] as const;

/** What a version's properties say of its original: its date, author and label, each only where present and valid. */
export interface CarriedStamp {
  modified?: Date;
  modifiedBy?: string;
  version?: string;
}

/** The original a version's properties carry (a copy of a copy); an unreadable date is left out, so the version's own date stands. */
export function carriedStamp(properties: Readonly<Record<string, string | null>> | undefined): CarriedStamp {
  if (!properties) return {};
  const modified = dateOf(properties[SOURCE_MODIFIED]);
  const author = properties[SOURCE_AUTHOR];
  const version = properties[SOURCE_VERSION];
  return {
    ...(modified ? { modified } : {}),
    ...(author ? { modifiedBy: author } : {}),
    ...(version ? { version } : {}),
  };
}

/** The properties written on a target version: the date as ISO 8601 (to the millisecond), the author, the source's label. */
export function stampProperties(stamp: VersionStamp, version: string | undefined): Record<string, string> {
  return {
    ...(stamp.modified ? { [SOURCE_MODIFIED]: stamp.modified.toISOString() } : {}),
    ...(stamp.modifiedBy ? { [SOURCE_AUTHOR]: stamp.modifiedBy } : {}),
    ...(version ? { [SOURCE_VERSION]: version } : {}),
  };
}

/** How a target that cannot keep a version's date or author as its own fields keeps them: as that version's properties, or not at all (and why). */
export type PropertyRoute = { write: true } | { write: false; why: string };

/**
 * Whether the target keeps the three properties per version: its versions have properties of their own
 * (versioning.versionProperties), it updates properties, and its document type declares the three writable
 * (where it describes its properties; one that does not is tried, and a refusal is the document's warning).
 */
export async function propertyRoute(target: ContentConnector): Promise<PropertyRoute> {
  const names = SOURCE_STAMP_PROPERTIES.join(', ');
  if (!target.propertyUpdate) return { write: false, why: 'it keeps no properties either' };
  if (!target.versioning?.versionProperties) return { write: false, why: `its properties are the document's, not each version's, so ${names} would keep the newest version's only` };
  const described = await target.propertyUpdate.describeProperties?.();
  if (described) {
    // source_modified may be a date property of the type (it takes ISO 8601); the others are text.
    const fits = (name: string, kind: string) => kind === 'string' || (name === SOURCE_MODIFIED && kind === 'date');
    const missing = SOURCE_STAMP_PROPERTIES.filter((name) => !described.some((p) => p.name === name && p.writable && fits(name, p.kind) && !p.multiValue));
    if (missing.length > 0) return { write: false, why: `its document type does not declare ${missing.join(', ')} (writable single strings), which would keep them per version` };
  }
  return { write: true };
}

/** A carried date: ISO 8601, or epoch milliseconds (as a repository reports a date-typed property); undefined when neither. */
function dateOf(value: string | null | undefined): Date | undefined {
  if (!value) return undefined;
  const date = new Date(/^-?\d+$/.test(value) ? Number(value) : value);
  return Number.isFinite(date.getTime()) ? date : undefined;
}
