import { Injectable } from '@nestjs/common';
import { InvalidArgumentError, NotSupportedError, type AclCapability, type Actor, type ContentConnector } from '@gateway/connector-api';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { PRINCIPAL, type AclDeleteQuery, type AclEntries } from './permissions.dto';

/**
 * Spec 4.3 over the `acls` capability group. Entries are
 * `<principal>:<permission>[,<permission>...]`; permission names are the
 * repository's. Validation comes first (400 naming the parameter), then the
 * connector's capability (501 naming `acls`).
 */
@Injectable()
export class PermissionsService {
  constructor(private readonly registry: ConnectorRegistry) {}

  async get(connectorId: string, id: string): Promise<string[]> {
    return acls(this.registry.get(connectorId)).getAcl(id);
  }

  /** Adds each principal with the given permissions, replacing the ones it had; answers the resulting entries. */
  async post(connectorId: string, id: string, entries: AclEntries, user: AuthenticatedUser): Promise<string[]> {
    return acls(this.registry.get(connectorId)).applyAcl(id, entries, toActor(user));
  }

  /** Removes the principals' entries; answers the removed principals, comma-delimited. */
  async delete(connectorId: string, query: AclDeleteQuery, user: AuthenticatedUser): Promise<string> {
    const connector = this.registry.get(connectorId);
    const principals = parsePrincipals(query);
    const removed = await acls(connector).removeAcl(query.id, principals, toActor(user), { breakInheritance: query.breakInheritance === true });
    return removed.join(',');
  }
}

function acls(connector: ContentConnector): AclCapability {
  if (!connector.acls) throw new NotSupportedError('acls', connector.typeId);
  return connector.acls;
}

function toActor(user: AuthenticatedUser): Actor {
  return { username: user.username };
}

/** `aclId` (or its alias `acls`): comma-delimited principal ids. */
export function parsePrincipals(query: AclDeleteQuery): string[] {
  if (query.aclId !== undefined && query.acls !== undefined && query.aclId !== query.acls) {
    throw new InvalidArgumentError('aclId', "Invalid parameter 'aclId': give aclId or its alias acls, not both");
  }
  const raw = query.aclId ?? query.acls;
  if (raw === undefined) throw new InvalidArgumentError('aclId', "Invalid parameter 'aclId': give the comma-delimited principal ids to remove");
  const principals = [...new Set(raw.split(',').map((p) => p.trim()).filter((p) => p !== ''))];
  if (principals.length === 0) throw new InvalidArgumentError('aclId', "Invalid parameter 'aclId': give at least one principal id");
  const bad = principals.find((p) => !PRINCIPAL.test(p));
  if (bad !== undefined) throw new InvalidArgumentError('aclId', `Invalid parameter 'aclId': '${bad.slice(0, 64)}' is not a principal id`);
  return principals;
}
