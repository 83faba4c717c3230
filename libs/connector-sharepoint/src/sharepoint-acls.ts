import { ConflictError, InvalidArgumentError, type AclCapability, type AclRemoveOptions, type Actor } from '@gateway/connector-api';
import { parseId, type SpId } from './ids';
import { ACCEPT, expanded, literal, query, readCollection, readEntity, readPrimitive, str, type Json } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** Gateway permission names ↔ SharePoint role definitions (README: permission mapping). */
export const PERMISSION_TO_ROLE: Record<string, string> = { read: 'Read', write: 'Contribute', all: 'Full Control' };
const ROLE_TO_PERMISSION: Record<string, string> = { read: 'read', contribute: 'write', 'full control': 'all' };

/** The acls group: role assignments of a file or folder (README: permission mapping). */
export class SharePointAcls implements AclCapability {
  constructor(private readonly connector: SharePointConnector) {}

  private securable(spId: SpId): string {
    return spId.kind === 'folder' ? `web/GetFolderById(${literal(spId.uid)})/ListItemAllFields` : `web/GetFileById(${literal(spId.uid)})/ListItemAllFields`;
  }

  private async assignments(spId: SpId, id: string): Promise<Array<{ principalId: number; principal: string; roles: Array<{ id: number; name: string }> }>> {
    const state = await this.connector.list();
    if (spId.kind === 'folder' && spId.uid === state.rootUid) throw new InvalidArgumentError('id', "Invalid parameter 'id': the library's root folder has the library's permissions; set them on its items");
    const { items } = readCollection(await this.connector.getJson(`${this.securable(spId)}/RoleAssignments${query({ $expand: 'Member,RoleDefinitionBindings' })}`, { id, parameter: 'id' }));
    return items.map((ra) => {
      const member = (expanded(ra, 'Member') as Json | undefined) ?? {};
      const roles = ((expanded(ra, 'RoleDefinitionBindings') as Json[] | undefined) ?? []).map((r) => ({ id: Number(r.Id), name: str(r, 'Name') ?? '' }));
      return { principalId: Number(ra.PrincipalId), principal: principalName(member), roles };
    });
  }

  async getAcl(id: string): Promise<string[]> {
    const spId = parseId(id, 'id');
    return (await this.assignments(spId, id))
      .filter((a) => a.roles.some((r) => r.name !== 'Limited Access'))
      .map((a) => `${a.principal}:${a.roles.filter((r) => r.name !== 'Limited Access').map((r) => ROLE_TO_PERMISSION[r.name.toLowerCase()] ?? r.name).join(',')}`);
  }

  private async breakInheritance(spId: SpId, id: string): Promise<void> {
    const unique = readPrimitive(await this.connector.getJson(`${this.securable(spId)}/HasUniqueRoleAssignments`, { id }), 'HasUniqueRoleAssignments');
    // The first change copies the inherited assignments, so nobody loses access as a side effect.
    if (unique !== true) await this.connector.post(`${this.securable(spId)}/breakroleinheritance(copyRoleAssignments=true,clearSubscopes=true)`, { errorContext: { id } });
  }

  private async principalId(principal: string): Promise<number> {
    const groups = readCollection(await this.connector.getJson(`web/SiteGroups${query({ $select: 'Id,Title' })}`)).items;
    const group = groups.find((g) => (str(g, 'Title') ?? '').toLowerCase() === principal.toLowerCase());
    if (group) return Number(group.Id);
    const login = principal.includes('|') ? principal : `i:0#.f|membership|${principal}`;
    const user = readEntity(await this.connector.post(`web/ensureuser`, { body: JSON.stringify({ logonName: login }), headers: { 'content-type': 'application/json;odata=nometadata' }, errorContext: { parameter: principal } }));
    return Number(user.Id);
  }

  private async roleDefinitionId(permission: string, principal: string): Promise<number> {
    const name = PERMISSION_TO_ROLE[permission.toLowerCase()] ?? permission;
    const res = await this.connector.http.json({ method: 'GET', url: `${this.connector.api}/web/RoleDefinitions/GetByName(@n)${query({ '@n': literal(name), $select: 'Id' })}`, headers: { accept: ACCEPT }, accept: [400, 404] });
    if (res.status !== 200) {
      throw new InvalidArgumentError(principal, `Invalid parameter '${principal}': unknown permission '${permission}' (read, write, all, or a permission level of the site)`);
    }
    return Number(readEntity(res.data).Id);
  }

  async applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]> {
    void actor;
    const spId = parseId(id, 'id');
    const plan: Array<{ principalId: number; roleIds: number[] }> = [];
    for (const [principal, permissions] of Object.entries(entries)) {
      const roleIds: number[] = [];
      for (const p of permissions) roleIds.push(await this.roleDefinitionId(p, principal));
      plan.push({ principalId: await this.principalId(principal), roleIds });
    }
    const current = await this.assignments(spId, id);
    await this.breakInheritance(spId, id);
    const base = `${this.securable(spId)}/RoleAssignments`;
    for (const { principalId, roleIds } of plan) {
      const had = current.find((a) => a.principalId === principalId)?.roles.map((r) => r.id) ?? [];
      for (const r of had) if (!roleIds.includes(r)) await this.connector.post(`${base}/removeroleassignment(principalid=${principalId},roledefid=${r})`, { errorContext: { id } });
      for (const r of roleIds) if (!had.includes(r)) await this.connector.post(`${base}/addroleassignment(principalid=${principalId},roledefid=${r})`, { errorContext: { id } });
    }
    return this.getAcl(id);
  }

  async removeAcl(id: string, principals: string[], actor: Actor, options: AclRemoveOptions = {}): Promise<string[]> {
    void actor;
    const spId = parseId(id, 'id');
    const current = await this.assignments(spId, id);
    const targets = current.filter((a) => principals.some((p) => p.toLowerCase() === a.principal.toLowerCase()));
    if (targets.length === 0) return [];
    if (!options.breakInheritance && !(await this.hasUniqueAssignments(spId, id))) {
      // Removing from an item that inherits would need breakroleinheritance: a side effect the caller asks for by name.
      const origin = await this.inheritedFrom(spId, id);
      throw new ConflictError(
        `'${targets[0].principal}' is inherited from ${origin} on '${id}'; pass breakInheritance=true to give the item its own copy of the inherited permissions and remove it there`,
        'ACL_INHERITED',
        { id, principal: targets[0].principal, inheritedFrom: origin },
      );
    }
    await this.breakInheritance(spId, id);
    for (const t of targets) {
      await this.connector.post(`${this.securable(spId)}/RoleAssignments/GetByPrincipalId(${t.principalId})`, { headers: { 'x-http-method': 'DELETE' }, errorContext: { id } });
    }
    return targets.map((t) => t.principal);
  }

  private async hasUniqueAssignments(spId: SpId, id: string): Promise<boolean> {
    return readPrimitive(await this.connector.getJson(`${this.securable(spId)}/HasUniqueRoleAssignments`, { id }), 'HasUniqueRoleAssignments') === true;
  }

  /** The nearest ancestor holding its own role assignments: a folder by its gateway path, the library, or the site. */
  private async inheritedFrom(spId: SpId, id: string): Promise<string> {
    const state = await this.connector.list();
    const self = readEntity(
      await this.connector.getJson(`web/${spId.kind === 'folder' ? 'GetFolderById' : 'GetFileById'}(${literal(spId.uid)})${query({ $select: 'ServerRelativeUrl' })}`, { id }),
    );
    let folder = parentOf(str(self, 'ServerRelativeUrl') ?? '');
    while (folder.toLowerCase().startsWith(state.rootPath.toLowerCase() + '/')) {
      const unique = readPrimitive(
        await this.connector.getJson(`web/GetFolderByServerRelativePath(decodedurl=@p)/ListItemAllFields/HasUniqueRoleAssignments${query({ '@p': literal(folder) })}`, { id }),
        'HasUniqueRoleAssignments',
      );
      if (unique === true) return `the folder '${folder.slice(state.rootPath.length)}'`;
      folder = parentOf(folder);
    }
    const library = readPrimitive(await this.connector.getJson(`web/lists/getbytitle(@t)/HasUniqueRoleAssignments${query({ '@t': literal(state.title) })}`, { id }), 'HasUniqueRoleAssignments');
    return library === true ? `the library '${state.title}'` : `the site '${state.webPath || '/'}'`;
  }
}

function parentOf(serverRelative: string): string {
  return serverRelative.slice(0, Math.max(0, serverRelative.lastIndexOf('/')));
}

/** The principal id the gateway shows: a user's account (the claim's last part), a group's title. */
export function principalName(member: Json): string {
  if (Number(member.PrincipalType) === 8 || Number(member.PrincipalType) === 4) return str(member, 'Title') ?? str(member, 'LoginName') ?? '';
  const login = str(member, 'LoginName') ?? '';
  return login.includes('|') ? login.slice(login.lastIndexOf('|') + 1) : login;
}
