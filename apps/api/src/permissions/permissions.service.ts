import { Injectable } from '@nestjs/common';
import { InvalidArgumentError, NotSupportedError, type AclCapability, type Actor, type ContentConnector } from '@gateway/connector-api';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { AclDeleteQuery } from './permissions.dto';

/** Principal ids end at the first ':' of an entry and are listed with ',' on delete, so they may contain neither. */
const PRINCIPAL = /^[^\s:,][^:,\u0000-\u001f\u007f]{0,255}$/;
const PERMISSION = /^[^\s,\u0000-\u001f\u007f]{1,256}$/;
const MAX_ENTRIES = 256;

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
  async post(connectorId: string, id: string, body: unknown, user: AuthenticatedUser): Promise<string[]> {
    const connector = this.registry.get(connectorId);
    const entries = parseAclBody(body);
    return acls(connector).applyAcl(id, entries, toActor(user));
  }

  /** Removes the principals' entries; answers the removed principals, comma-delimited. */
  async delete(connectorId: string, query: AclDeleteQuery, user: AuthenticatedUser): Promise<string> {
    const connector = this.registry.get(connectorId);
    const principals = parsePrincipals(query);
    const removed = await acls(connector).removeAcl(query.id, principals, toActor(user));
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

/** The Post ACLs body: a JSON object mapping principal ids to comma-separated permission lists. */
export function parseAclBody(body: unknown): Record<string, string[]> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidArgumentError('body', "Invalid parameter 'body': must be a JSON object mapping principal ids to comma-separated permissions", 'INVALID_ACL');
  }
  const pairs = Object.entries(body as Record<string, unknown>);
  if (pairs.length === 0) throw new InvalidArgumentError('body', "Invalid parameter 'body': give at least one principal", 'INVALID_ACL');
  if (pairs.length > MAX_ENTRIES) throw new InvalidArgumentError('body', `Invalid parameter 'body': at most ${MAX_ENTRIES} principals`, 'INVALID_ACL');
  const entries: Record<string, string[]> = {};
  for (const [principal, value] of pairs) {
    const parameter = principal.slice(0, 256) || 'body';
    if (!PRINCIPAL.test(principal)) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': a principal id is 1 to 256 characters without ':', ',' or control characters`, 'INVALID_ACL');
    }
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': the permissions are a comma-separated string, e.g. "cmis:read,cmis:write"`, 'INVALID_ACL');
    }
    const permissions = [...new Set(value.split(',').map((p) => p.trim()))];
    if (permissions.some((p) => !PERMISSION.test(p))) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': give one or more permission names separated by commas`, 'INVALID_ACL');
    }
    entries[principal] = permissions;
  }
  return entries;
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
