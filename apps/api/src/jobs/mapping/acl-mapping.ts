import type { AclMapping } from '../../config/acl-mapping.dto';

/**
 * Permission mapping of a copy job (`options.copyAcls`, `options.aclMapping`): the source's ACL entries
 * (`principal:perm[,perm...]`, as the `acls` group answers them) turned into the target's, by the job's
 * maps over the default permission table of the connector pair. Pure: the copier and the dry run share it.
 */

/** Connector types whose `acls` group a copy job can carry permissions between. */
export const ACL_CONNECTOR_TYPES = ['cmis', 'sharepoint', 'graph'] as const;

/**
 * Default permissions per (source type → target type), in each connector's own names as its `acls` group
 * reads and writes them: CMIS `cmis:*`; SharePoint REST the gateway names `read`, `write`, `all` on reading
 * and the site's permission levels (`Read`, `Contribute`, `Full Control`) on writing; Graph roles
 * `read`, `write`, `owner`. Between two connectors of one type permissions keep their names.
 */
export const DEFAULT_PERMISSIONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'cmis>sharepoint': { 'cmis:read': 'Read', 'cmis:write': 'Contribute', 'cmis:all': 'Full Control' },
  'sharepoint>cmis': { read: 'cmis:read', write: 'cmis:write', all: 'cmis:all' },
  'cmis>graph': { 'cmis:read': 'read', 'cmis:write': 'write', 'cmis:all': 'owner' },
  'graph>cmis': { read: 'cmis:read', write: 'cmis:write', owner: 'cmis:all' },
  'sharepoint>graph': { read: 'read', write: 'write', all: 'owner' },
  'graph>sharepoint': { read: 'Read', write: 'Contribute', owner: 'Full Control' },
};

/** An ACL mapping ready for use: lower-cased lookups, files merged over the inline maps. */
export interface CompiledAclMapping {
  /** Source principal (users and groups, lower-cased) → target principal. */
  readonly principals: ReadonlyMap<string, string>;
  /** The job gives no principal map at all (inline or file): principals keep their names. */
  readonly principalsKeepNames: boolean;
  /** Source permission (lower-cased) → target permission: the pair's default table with the job's map over it. */
  readonly permissions: ReadonlyMap<string, string>;
  /** Source and target of one type: a permission the table does not name keeps its name. */
  readonly keepsNames: boolean;
  readonly unmapped: AclMapping['unmapped'];
}

/** What the mapping made of one document's entries. */
export interface MappedAcl {
  /** Target principal → target permissions: what applyAcl takes. */
  mapped: Record<string, string[]>;
  /** Source principals no map names, and source permissions neither the job's map nor the default table names. */
  unmapped: { principals: string[]; permissions: string[] };
}

/** The principals read from `principalsFile` / `groupsFile` (acl-mapping-csv.ts), merged over the inline maps. */
export interface MappingFiles {
  principals?: ReadonlyMap<string, string>;
  groups?: ReadonlyMap<string, string>;
}

/**
 * The mapping of one run: the job's maps (files over inline ones), and the permission table of the
 * pair with the job's `permissions` over it. Without any principal map principals keep their names; between
 * two connectors of one type permissions the table does not name keep theirs.
 */
export function compileAclMapping(mapping: AclMapping | undefined, sourceType: string, targetType: string, files: MappingFiles = {}): CompiledAclMapping {
  const principals = new Map<string, string>();
  for (const map of [mapping?.groups, mapping?.principals]) for (const [from, to] of Object.entries(map ?? {})) principals.set(from.trim().toLowerCase(), to.trim());
  for (const map of [files.groups, files.principals]) for (const [from, to] of map ?? []) principals.set(from.toLowerCase(), to);
  const table = new Map<string, string>();
  const defaults = sourceType === targetType ? {} : (DEFAULT_PERMISSIONS[`${sourceType}>${targetType}`] ?? {});
  for (const [from, to] of Object.entries(defaults)) table.set(from.toLowerCase(), to);
  for (const [from, to] of Object.entries(mapping?.permissions ?? {})) table.set(from.trim().toLowerCase(), to.trim());
  const principalsKeepNames = [mapping?.principals, mapping?.groups, mapping?.principalsFile, mapping?.groupsFile].every((m) => m === undefined);
  return { principals, principalsKeepNames, permissions: table, keepsNames: sourceType === targetType, unmapped: mapping?.unmapped ?? 'drop' };
}

/**
 * One document's entries through the mapping: a principal no map names, or a permission no table names,
 * is left out and listed in `unmapped` (the caller drops it with a warning, or fails the document).
 * Two source principals mapped to one target principal get the union of their permissions.
 */
export function mapAclEntries(mapping: CompiledAclMapping, sourceEntries: readonly string[]): MappedAcl {
  const mapped: Record<string, string[]> = {};
  const unmappedPrincipals = new Set<string>();
  const unmappedPermissions = new Set<string>();
  for (const entry of sourceEntries) {
    const colon = entry.indexOf(':');
    if (colon <= 0) continue;
    const principal = entry.slice(0, colon);
    const target = mapping.principals.get(principal.toLowerCase()) ?? (mapping.principalsKeepNames ? principal : undefined);
    if (target === undefined) {
      unmappedPrincipals.add(principal);
      continue;
    }
    const permissions: string[] = [];
    for (const raw of entry.slice(colon + 1).split(',')) {
      const permission = raw.trim();
      if (permission === '') continue;
      const to = mapping.permissions.get(permission.toLowerCase()) ?? (mapping.keepsNames ? permission : undefined);
      if (to === undefined) unmappedPermissions.add(permission);
      else if (!permissions.includes(to)) permissions.push(to);
    }
    if (permissions.length === 0) continue;
    const had = mapped[target] ?? [];
    for (const p of permissions) if (!had.includes(p)) had.push(p);
    mapped[target] = had;
  }
  return { mapped, unmapped: { principals: [...unmappedPrincipals], permissions: [...unmappedPermissions] } };
}

/** For the dry run: the job's mapping straight onto a document's entries (no files: pass them in `files`). */
export function mapAcl(mapping: AclMapping | undefined, sourceEntries: readonly string[], pair: { sourceType: string; targetType: string }, files?: MappingFiles): MappedAcl {
  return mapAclEntries(compileAclMapping(mapping, pair.sourceType, pair.targetType, files), sourceEntries);
}

/** `principals 'a', 'b'; permissions 'x'`: what a warning or a failure names. */
export function describeUnmapped(unmapped: MappedAcl['unmapped'], limit = 10): string {
  const list = (items: string[]) => items.slice(0, limit).map((i) => `'${i}'`).join(', ') + (items.length > limit ? ` and ${items.length - limit} more` : '');
  const parts: string[] = [];
  if (unmapped.principals.length > 0) parts.push(`principal${unmapped.principals.length > 1 ? 's' : ''} ${list(unmapped.principals)}`);
  if (unmapped.permissions.length > 0) parts.push(`permission${unmapped.permissions.length > 1 ? 's' : ''} ${list(unmapped.permissions)}`);
  return parts.join('; ');
}
