import { ConflictError, InvalidArgumentError, NotSupportedError, type AclCapability, type AclRemoveOptions, type Actor } from '@gateway/connector-api';
import { checkId, splitVersion } from './drive-items';
import type { GraphConnector } from './graph.connector';

interface Permission {
  id: string;
  roles?: string[];
  grantedToV2?: { user?: { email?: string; displayName?: string } | null; siteUser?: { email?: string; loginName?: string } | null; group?: { displayName?: string; email?: string } | null };
  grantedTo?: { user?: { email?: string; displayName?: string } | null };
  inheritedFrom?: { path?: string; id?: string } | null;
}

const VALID_ROLES = ['read', 'write', 'owner'];

/** The acls group: the item's sharing permissions (grants by e-mail address). */
export class GraphAcls implements AclCapability {
  constructor(private readonly connector: GraphConnector) {}

  private principalOf(p: Permission): string | undefined {
    return p.grantedToV2?.user?.email ?? p.grantedToV2?.siteUser?.email ?? p.grantedTo?.user?.email ?? p.grantedToV2?.group?.email ?? p.grantedToV2?.group?.displayName ?? undefined;
  }

  private async permissionsOf(id: string): Promise<Permission[]> {
    checkId(id, 'id');
    return (await this.connector.call<{ value: Permission[] }>({ method: 'GET', path: `${await this.connector.itemPath(splitVersion(id).item)}/permissions`, errorContext: { id, parameter: 'id' } })).data.value;
  }

  private format(perms: Permission[]): string[] {
    const byPrincipal = new Map<string, Set<string>>();
    for (const p of perms) {
      const principal = this.principalOf(p);
      if (!principal) continue;
      const roles = byPrincipal.get(principal) ?? new Set<string>();
      for (const r of p.roles ?? []) roles.add(r);
      byPrincipal.set(principal, roles);
    }
    return [...byPrincipal].map(([principal, roles]) => `${principal}:${[...roles].sort().join(',')}`).sort();
  }

  async getAcl(id: string): Promise<string[]> {
    return this.format(await this.permissionsOf(id));
  }

  async applyAcl(id: string, entries: Record<string, string[]>, _actor: Actor): Promise<string[]> {
    for (const [principal, roles] of Object.entries(entries)) {
      if (!/^[^@\s]+@[^@\s]+$/.test(principal)) throw new InvalidArgumentError(principal, `Invalid principal '${principal}': Microsoft Graph grants to e-mail addresses`);
      const bad = roles.filter((r) => !VALID_ROLES.includes(r));
      if (bad.length > 0 || roles.length === 0) throw new InvalidArgumentError(principal, `Invalid permissions for '${principal}': use ${VALID_ROLES.join(', ')}`);
    }
    const itemPath = await this.connector.itemPath(splitVersion(id).item);
    const current = await this.permissionsOf(id);
    for (const [principal, roles] of Object.entries(entries)) {
      // Replace: the principal's own grants go, then one invitation with exactly the asked roles.
      for (const p of current.filter((x) => this.principalOf(x)?.toLowerCase() === principal.toLowerCase() && !x.inheritedFrom)) {
        await this.connector.call({ method: 'DELETE', path: `${itemPath}/permissions/${encodeURIComponent(p.id)}`, accept: [403], errorContext: { id } });
      }
      await this.connector.call({
        method: 'POST',
        path: `${itemPath}/invite`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ recipients: [{ email: principal }], roles, requireSignIn: true, sendInvitation: false }),
        errorContext: { id, parameter: principal },
      });
    }
    return this.getAcl(id);
  }

  async removeAcl(id: string, principals: string[], _actor: Actor, options: AclRemoveOptions = {}): Promise<string[]> {
    const itemPath = await this.connector.itemPath(splitVersion(id).item);
    const current = await this.permissionsOf(id);
    const targets = current.filter((x) => principals.some((p) => this.principalOf(x)?.toLowerCase() === p.toLowerCase()));
    const inherited = await this.inheritedAmong(id, targets);
    if (inherited) {
      // Graph v1.0 has no call that stops a drive item inheriting; deleting an inherited grant is refused (permission-delete).
      if (options.breakInheritance) throw new NotSupportedError('breakInheritance', 'graph');
      const principal = this.principalOf(inherited.permission) ?? '';
      throw new ConflictError(
        `'${principal}' is inherited from '${inherited.origin}' on '${id}'; remove it there (Microsoft Graph cannot break a drive item's inheritance)`,
        'ACL_INHERITED',
        { id, principal, inheritedFrom: inherited.origin },
      );
    }
    const removed: string[] = [];
    for (const principal of principals) {
      const own = targets.filter((x) => this.principalOf(x)?.toLowerCase() === principal.toLowerCase());
      let any = false;
      for (const p of own) {
        const res = await this.connector.call({ method: 'DELETE', path: `${itemPath}/permissions/${encodeURIComponent(p.id)}`, accept: [403], errorContext: { id } });
        if (res.status !== 403) any = true;
      }
      if (any) removed.push(principal);
    }
    return removed;
  }

  /**
   * The first of the permissions that the item inherits, with the gateway path of the ancestor it comes from.
   * `inheritedFrom` when Graph gives it (OneDrive); SharePoint-backed drives leave it out, so there a
   * permission the parent lists under the same id is inherited, from the topmost ancestor listing it.
   */
  private async inheritedAmong(id: string, targets: Permission[]): Promise<{ permission: Permission; origin: string } | undefined> {
    if (targets.length === 0) return undefined;
    const declared = targets.find((p) => p.inheritedFrom);
    if (declared) return { permission: declared, origin: graphPath(declared.inheritedFrom?.path) ?? declared.inheritedFrom?.id ?? 'an ancestor' };
    let item = await this.connector.fetchItem(splitVersion(id).item);
    let found: { permission: Permission; origin: string } | undefined;
    let candidates = targets;
    while (item.parentReference?.id && candidates.length > 0) {
      const parentId = item.parentReference.id;
      const listed = new Set((await this.permissionsOf(parentId)).map((p) => p.id));
      candidates = candidates.filter((p) => listed.has(p.id));
      if (candidates.length === 0) break;
      item = await this.connector.fetchItem(parentId);
      found = { permission: candidates[0], origin: this.connector.toItemInfo(item).path };
    }
    return found;
  }
}

/** `/drive/root:/a/b` → `/a/b`. */
function graphPath(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const inside = decodeURIComponent(path.replace(/^[^:]*:?/, ''));
  return inside === '' ? '/' : inside;
}
