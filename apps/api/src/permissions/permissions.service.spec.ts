import {
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  type AclCapability,
  type AclRemoveOptions,
  type Actor,
  type ConnectorType,
  type ContentConnector,
} from '@gateway/connector-api';
import { kindsOf, startConnectorRegistry } from '../../../../test/support/connector-registry';
import type { GatewayConfig } from '../config/gateway-config';
import { parseAclBody } from './permissions.dto';
import { parsePrincipals, PermissionsService } from './permissions.service';

/** An ACL store in memory, as a repository keeps it: principal → permissions per item. */
class FakeAcls implements AclCapability {
  readonly items = new Map<string, Map<string, string[]>>();
  readonly actors: Actor[] = [];
  readonly removeOptions: Array<AclRemoveOptions | undefined> = [];

  async getAcl(id: string): Promise<string[]> {
    return [...(this.items.get(id) ?? new Map<string, string[]>())].map(([p, perms]) => `${p}:${perms.join(',')}`);
  }

  async applyAcl(id: string, entries: Record<string, string[]>, actor: Actor): Promise<string[]> {
    this.actors.push(actor);
    const acl = this.items.get(id) ?? new Map<string, string[]>();
    for (const [principal, permissions] of Object.entries(entries)) acl.set(principal, permissions);
    this.items.set(id, acl);
    return this.getAcl(id);
  }

  async removeAcl(id: string, principals: string[], actor: Actor, options?: AclRemoveOptions): Promise<string[]> {
    this.actors.push(actor);
    this.removeOptions.push(options);
    const acl = this.items.get(id) ?? new Map<string, string[]>();
    return principals.filter((p) => acl.delete(p));
  }
}

function connectorType(typeId: string, acls?: AclCapability): ConnectorType {
  return {
    typeId,
    // A content connector (the registry tells them by getItem); only `acls` is ever called here.
    create: async (definition) =>
      ({
        id: definition.id,
        typeId,
        description: '',
        publicParams: {},
        acls,
        getItem: () => Promise.reject(new Error('not used by the permissions service')),
      }) as unknown as ContentConnector,
  };
}

describe('PermissionsService', () => {
  const alice = { username: 'alice', roles: ['user' as const] };
  let acls: FakeAcls;
  let service: PermissionsService;

  beforeEach(async () => {
    acls = new FakeAcls();
    const config = {
      dataDir: '/unused',
      connectors: [
        { id: 'cmis', typeId: 'with-acls', description: '', params: {} },
        { id: 'fs', typeId: 'without-acls', description: '', params: {} },
      ],
    } as unknown as GatewayConfig;
    const registry = await startConnectorRegistry(config, kindsOf([connectorType('with-acls', acls), connectorType('without-acls')]));
    service = new PermissionsService(registry);
  });

  it('adds entries, replacing a principal’s permissions, and answers the resulting ACL', async () => {
    expect(await service.post('cmis', 'doc-1', parseAclBody({ alice: 'cmis:read', bob: 'cmis:read, cmis:write' }), alice)).toEqual([
      'alice:cmis:read',
      'bob:cmis:read,cmis:write',
    ]);
    expect(await service.post('cmis', 'doc-1', parseAclBody({ alice: 'cmis:all' }), alice)).toEqual(['alice:cmis:all', 'bob:cmis:read,cmis:write']);
    expect(await service.get('cmis', 'doc-1')).toEqual(['alice:cmis:all', 'bob:cmis:read,cmis:write']);
    expect(acls.actors).toEqual([{ username: 'alice' }, { username: 'alice' }]);
  });

  it('removes principals and answers those removed, comma-delimited', async () => {
    await service.post('cmis', 'doc-1', parseAclBody({ alice: 'r', bob: 'r', carol: 'r' }), alice);
    expect(await service.delete('cmis', { id: 'doc-1', aclId: 'alice, carol,nobody' }, alice)).toBe('alice,carol');
    expect(await service.get('cmis', 'doc-1')).toEqual(['bob:r']);
    expect(await service.delete('cmis', { id: 'doc-1', acls: 'bob' }, alice)).toBe('bob');
    expect(acls.removeOptions).toEqual([{ breakInheritance: false }, { breakInheritance: false }]);
  });

  it('passes breakInheritance=true on to the connector', async () => {
    await service.post('cmis', 'doc-1', parseAclBody({ alice: 'r' }), alice);
    expect(await service.delete('cmis', { id: 'doc-1', aclId: 'alice', breakInheritance: true }, alice)).toBe('alice');
    expect(acls.removeOptions).toEqual([{ breakInheritance: true }]);
  });

  it('answers 501 naming acls for a connector without them, after validating the input', async () => {
    await expect(service.get('fs', 'x')).rejects.toThrow(NotSupportedError);
    await expect(service.post('fs', 'x', parseAclBody({ alice: 'r' }), alice)).rejects.toMatchObject({ kind: 'not_supported', message: expect.stringContaining('acls') });
    await expect(service.delete('fs', { id: 'x', aclId: 'alice' }, alice)).rejects.toThrow(NotSupportedError);
    // Bad input is a 400 first, whatever the connector offers (a bad POST body never reaches the service: AclBodyPipe).
    await expect(service.delete('fs', { id: 'x' }, alice)).rejects.toThrow(InvalidArgumentError);
  });

  it('answers 404 for an unknown connector', async () => {
    await expect(service.get('nope', 'x')).rejects.toThrow(NotFoundError);
  });
});

/** The InvalidArgumentError fn throws. */
function refusal(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidArgumentError) return e;
    throw e;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('parseAclBody', () => {
  it('reads principals to de-duplicated, trimmed permission lists', () => {
    expect(parseAclBody({ alice: 'cmis:read', 'finance-team': ' cmis:read , cmis:write,cmis:read' })).toEqual({
      alice: ['cmis:read'],
      'finance-team': ['cmis:read', 'cmis:write'],
    });
  });

  it.each([
    ['null', null],
    ['a list', ['alice:read']],
    ['a string', 'alice:read'],
    ['a number', 7],
  ])('refuses %s as the body', (_what, body) => {
    const error = refusal(() => parseAclBody(body));
    expect(error.parameter).toBe('body');
    expect(error.message).toBe("Invalid parameter 'body': must be a JSON object mapping principal ids to comma-separated permissions");
  });

  it('refuses an empty body, and more than 256 principals', () => {
    expect(refusal(() => parseAclBody({})).message).toBe("Invalid parameter 'body': give at least one principal");
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 'r']));
    expect(Object.keys(parseAclBody(many(256)))).toHaveLength(256);
    expect(refusal(() => parseAclBody(many(257))).message).toBe("Invalid parameter 'body': at most 256 principals");
  });

  it.each([
    ['a colon', 'a:b'],
    ['a comma', 'a,b'],
    ['a leading space', ' alice'],
    ['a control character', 'al\u0001ice'],
    ['257 characters', 'p'.repeat(257)],
  ])('refuses a principal with %s, naming it', (_what, principal) => {
    const error = refusal(() => parseAclBody({ [principal]: 'r' }));
    expect(error.parameter).toBe(principal.slice(0, 256));
    expect(error.message).toBe(`Invalid parameter '${principal.slice(0, 256)}': a principal id is 1 to 256 characters without ':', ',' or control characters`);
  });

  it('accepts a principal of 256 characters, with inner spaces', () => {
    expect(Object.keys(parseAclBody({ ['p'.repeat(256)]: 'r', 'Finance Team': 'r' }))).toEqual(['p'.repeat(256), 'Finance Team']);
  });

  it('names the body for an empty principal', () => {
    expect(refusal(() => parseAclBody({ '': 'r' })).parameter).toBe('body');
  });

  it('refuses permissions that are not a string', () => {
    expect(refusal(() => parseAclBody({ alice: ['r'] })).message).toBe(
      `Invalid parameter 'alice': the permissions are a comma-separated string, e.g. "cmis:read,cmis:write"`,
    );
  });

  it.each(['', 'r,', ',r', 'r,,w', 'has space', 'x'.repeat(257), 'ctl\u007f'])('refuses the permission list %j', (value) => {
    expect(refusal(() => parseAclBody({ alice: value })).message).toBe("Invalid parameter 'alice': give one or more permission names separated by commas");
  });

  it('accepts a permission of 256 characters', () => {
    expect(parseAclBody({ alice: 'x'.repeat(256) })).toEqual({ alice: ['x'.repeat(256)] });
  });
});

describe('parsePrincipals', () => {
  it('reads aclId or its alias acls, trimmed, de-duplicated, empty items dropped', () => {
    expect(parsePrincipals({ id: 'x', aclId: ' alice, bob ,,alice' })).toEqual(['alice', 'bob']);
    expect(parsePrincipals({ id: 'x', acls: 'carol' })).toEqual(['carol']);
    expect(parsePrincipals({ id: 'x', aclId: 'carol', acls: 'carol' })).toEqual(['carol']);
  });

  it.each([
    [{ aclId: 'a', acls: 'b' }, "Invalid parameter 'aclId': give aclId or its alias acls, not both"],
    [{}, "Invalid parameter 'aclId': give the comma-delimited principal ids to remove"],
    [{ aclId: ' , ,' }, "Invalid parameter 'aclId': give at least one principal id"],
    [{ aclId: 'ok,a:b' }, "Invalid parameter 'aclId': 'a:b' is not a principal id"],
    [{ aclId: `${'p'.repeat(300)}` }, `Invalid parameter 'aclId': '${'p'.repeat(64)}' is not a principal id`],
  ])('refuses %j, naming aclId', (query, message) => {
    const error = refusal(() => parsePrincipals({ id: 'x', ...query }));
    expect(error.parameter).toBe('aclId');
    expect(error.message).toBe(message);
  });
});
