import { InvalidArgumentError } from '@gateway/connector-api';

/**
 * Gateway ids of SharePoint objects: `f.<UniqueId>` a file, `d.<UniqueId>` a folder (the library's
 * root folder included), `f.<UniqueId>.v<VersionId>` one earlier version of a file (VersionId 512 =
 * 1.0, major × 512 + minor). UniqueIds survive renames and moves, unlike paths or list item ids.
 */
export type SpId = { kind: 'file'; uid: string } | { kind: 'folder'; uid: string } | { kind: 'version'; uid: string; versionId: number };

const GUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';
const PATTERN = new RegExp(`^([fd])\\.(${GUID})(?:\\.v(\\d{1,9}))?$`);

export function parseId(id: unknown, parameter: string): SpId {
  const m = typeof id === 'string' ? PATTERN.exec(id) : null;
  if (!m || (m[1] === 'd' && m[3] !== undefined)) {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': not an id of this SharePoint connector`);
  }
  const uid = m[2].toLowerCase();
  if (m[3] !== undefined) return { kind: 'version', uid, versionId: Number(m[3]) };
  return m[1] === 'f' ? { kind: 'file', uid } : { kind: 'folder', uid };
}

export const fileId = (uid: string) => `f.${uid.toLowerCase()}`;
export const folderId = (uid: string) => `d.${uid.toLowerCase()}`;
export const versionId = (uid: string, v: number) => `f.${uid.toLowerCase()}.v${v}`;

/** The folder-listing cursor: SharePoint's `$skiptoken`, base64url-wrapped (opaque and header-safe). */
export function encodeCursor(skiptoken: string): string {
  return Buffer.from(JSON.stringify({ s: skiptoken })).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url');
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { s?: unknown };
    if (typeof parsed.s !== 'string' || parsed.s === '' || /[\u0000-\u001f]/.test(parsed.s)) throw new Error('no token');
    return parsed.s;
  } catch {
    throw new InvalidArgumentError('cursor', "Invalid parameter 'cursor': not a cursor this connector issued");
  }
}

/** The skiptoken of a next-page URL (`__next` / `odata.nextLink`), passed back as it came. */
export function skiptokenOf(nextUrl: string): string | undefined {
  try {
    return new URL(nextUrl).searchParams.get('$skiptoken') ?? undefined;
  } catch {
    return undefined;
  }
}
