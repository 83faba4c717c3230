import { ConflictError, NotSupportedError, UpstreamError, type AclCapability, type AclRemoveOptions, type Actor } from '@gateway/connector-api';
import type { AceChange, CmisAcl } from './cmis-client';
import type { CmisConnector } from './cmis.connector';
import { checkId } from './input';
import { splitVersion } from './item-info';

/** The acls group (repositories with capabilityACL=manage). */
export class CmisAcls implements AclCapability {
  constructor(private readonly connector: CmisConnector) {}

  async getAcl(id: string): Promise<string[]> {
    checkId(id, 'id');
    await this.connector.requireGroup('acls', 'acls');
    return formatAcl(await this.connector.client.getAcl(aclTarget(id), { id, parameter: 'id' }));
  }

  async applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]> {
    checkId(id, 'id');
    await this.connector.requireGroup('acls', 'acls');
    const target = aclTarget(id);
    const call = { as: this.connector.userFor(actor), id, parameter: 'id' };
    const current = await this.connector.client.getAcl(target, { id, parameter: 'id' });
    const direct = directPermissions(current);
    const adds: AceChange[] = [];
    const removes: AceChange[] = [];
    for (const [principal, permissions] of Object.entries(entries)) {
      const had = direct.get(principal);
      if (had && sameSet(had, permissions)) continue;
      if (had) removes.push({ principal, permissions: had });
      adds.push({ principal, permissions });
    }
    if (adds.length === 0) return formatAcl(current);
    let result = await this.aclAfter(target, await this.connector.client.applyAcl(target, adds, removes, call), call);
    // Repositories that add before they remove (OpenCMIS InMemory) drop a replaced principal: add it again.
    let missing = adds.filter((a) => !grants(result, a));
    if (missing.length > 0) result = await this.aclAfter(target, await this.connector.client.applyAcl(target, missing, [], call), call);
    missing = adds.filter((a) => !grants(result, a));
    if (missing.length > 0) {
      throw new UpstreamError(
        `The repository did not grant ${missing.map((a) => `${a.principal}:${a.permissions.join(',')}`).join('; ')}; its ACL is now ${formatAcl(result).join('; ') || 'empty'}`,
        { id },
      );
    }
    return formatAcl(result);
  }

  async removeAcl(id: string, principals: string[], actor: Actor, options: AclRemoveOptions = {}): Promise<string[]> {
    checkId(id, 'id');
    await this.connector.requireGroup('acls', 'acls');
    const target = aclTarget(id);
    const call = { as: this.connector.userFor(actor), id, parameter: 'id' };
    const current = await this.connector.client.getAcl(target, { id, parameter: 'id' });
    const direct = directPermissions(current);
    // Entries the repository reports as not direct come from elsewhere (CMIS does not say where) and cannot be removed here.
    const inherited = principals.find((p) => !direct.has(p) && (current.aces ?? []).some((ace) => ace.isDirect === false && ace.principal.principalId === p));
    if (inherited !== undefined) {
      if (options.breakInheritance) throw new NotSupportedError('breakInheritance', 'cmis');
      throw new ConflictError(
        `'${inherited}' is inherited on '${id}' (the repository reports its entry as not direct); remove it where it is set`,
        'ACL_INHERITED',
        { id, principal: inherited, inheritedFrom: 'a parent (not named by CMIS)' },
      );
    }
    const removes = principals.filter((p) => direct.has(p)).map((principal) => ({ principal, permissions: direct.get(principal)! }));
    if (removes.length === 0) return [];
    const result = await this.aclAfter(target, await this.connector.client.applyAcl(target, [], removes, call), call);
    const kept = removes.filter((r) => directPermissions(result).has(r.principal));
    if (kept.length > 0) {
      throw new UpstreamError(
        `The repository kept the entries of ${kept.map((r) => `'${r.principal}'`).join(', ')} (some repositories restore a default entry when the last one goes); its ACL is now ${formatAcl(result).join('; ')}`,
        { id },
      );
    }
    return removes.map((r) => r.principal);
  }

  private async aclAfter(target: string, answer: CmisAcl | undefined, call: { id: string; parameter: string }): Promise<CmisAcl> {
    return answer && Array.isArray(answer.aces) ? answer : this.connector.client.getAcl(target, call);
  }

}

/** Permissions belong to the document (its version series), not to one version. */
function aclTarget(id: string): string {
  return splitVersion(id)?.series ?? id;
}

function directPermissions(acl: CmisAcl): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const ace of acl.aces ?? []) {
    if (ace.isDirect === false) continue;
    const list = out.get(ace.principal.principalId) ?? [];
    for (const p of ace.permissions ?? []) if (!list.includes(p)) list.push(p);
    out.set(ace.principal.principalId, list);
  }
  return out;
}

/** `principal:perm1,perm2`, one entry per principal, in the repository's order. */
export function formatAcl(acl: CmisAcl): string[] {
  const merged = new Map<string, string[]>();
  for (const ace of acl.aces ?? []) {
    const list = merged.get(ace.principal.principalId) ?? [];
    for (const p of ace.permissions ?? []) if (!list.includes(p)) list.push(p);
    merged.set(ace.principal.principalId, list);
  }
  return [...merged].map(([principal, permissions]) => `${principal}:${permissions.join(',')}`);
}

function grants(acl: CmisAcl, ace: AceChange): boolean {
  const had = directPermissions(acl).get(ace.principal);
  return had !== undefined && ace.permissions.every((p) => had.includes(p));
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
