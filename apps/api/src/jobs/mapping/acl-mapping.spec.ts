import { InvalidArgumentError, type ContentConnector } from '@gateway/connector-api';
import type { JobDefinition } from '../../config/job-definition.dto';
import { checkAclOptions } from './acl-mapping-check';
import { compileAclMapping, describeUnmapped, mapAcl, mapAclEntries } from './acl-mapping';

const cmisToSp = { sourceType: 'cmis', targetType: 'sharepoint' };

describe('mapAcl', () => {
  it('maps principals and groups, and permissions by the pair’s default table', () => {
    const result = mapAcl(
      { principals: { alice: 'alice@contoso.com' }, groups: { GROUP_FINANCE: 'Finance Team' }, unmapped: 'drop' },
      ['alice:cmis:read,cmis:write', 'GROUP_FINANCE:cmis:all', 'anyone:cmis:read'],
      cmisToSp,
    );
    expect(result).toEqual({
      mapped: { 'alice@contoso.com': ['Read', 'Contribute'], 'Finance Team': ['Full Control'] },
      unmapped: { principals: ['anyone'], permissions: [] },
    });
  });

  it.each([
    ['sharepoint', 'cmis', ['u:read,write,all'], ['cmis:read', 'cmis:write', 'cmis:all']],
    ['cmis', 'graph', ['u:cmis:read,cmis:write,cmis:all'], ['read', 'write', 'owner']],
    ['graph', 'cmis', ['u:read,write,owner'], ['cmis:read', 'cmis:write', 'cmis:all']],
    ['graph', 'sharepoint', ['u:read,write,owner'], ['Read', 'Contribute', 'Full Control']],
    ['sharepoint', 'graph', ['u:read,write,all'], ['read', 'write', 'owner']],
  ])('has a default table %s → %s', (sourceType, targetType, entries, permissions) => {
    expect(mapAcl({ principals: { u: 'v' }, unmapped: 'drop' }, entries, { sourceType, targetType }).mapped).toEqual({ v: permissions });
  });

  it('lets the job’s permissions override and extend the table; names compare case-insensitively', () => {
    const mapping = { principals: { Alice: 'a@x' }, permissions: { 'cmis:write': 'Edit', 'custom:approve': 'Approve' }, unmapped: 'drop' as const };
    expect(mapAcl(mapping, ['ALICE:CMIS:WRITE,custom:approve,cmis:read'], cmisToSp).mapped).toEqual({ 'a@x': ['Edit', 'Approve', 'Read'] });
  });

  it('lists a permission no table names, dropping it and the entry left without any', () => {
    const result = mapAcl({ principals: { alice: 'a', bob: 'b' }, unmapped: 'drop' }, ['alice:cmis:read,vendor:special', 'bob:vendor:special'], cmisToSp);
    expect(result).toEqual({ mapped: { a: ['Read'] }, unmapped: { principals: [], permissions: ['vendor:special'] } });
  });

  it('keeps principal names without any principal map, and permission names between one type', () => {
    expect(mapAcl(undefined, ['alice@contoso.com:read,Design'], { sourceType: 'sharepoint', targetType: 'sharepoint' })).toEqual({
      mapped: { 'alice@contoso.com': ['read', 'Design'] },
      unmapped: { principals: [], permissions: [] },
    });
    // A principal map given: the others are unmapped.
    expect(mapAcl({ groups: { g: 'G' }, unmapped: 'drop' }, ['alice:read'], { sourceType: 'graph', targetType: 'graph' }).unmapped.principals).toEqual(['alice']);
    // Between two types, an unknown permission is unmapped even without maps.
    expect(mapAcl(undefined, ['alice:cmis:read,x'], cmisToSp)).toEqual({ mapped: { alice: ['Read'] }, unmapped: { principals: [], permissions: ['x'] } });
  });

  it('merges two source principals mapped to one target principal', () => {
    const result = mapAcl({ principals: { a1: 't', a2: 't' }, unmapped: 'drop' }, ['a1:cmis:read', 'a2:cmis:write,cmis:read'], cmisToSp);
    expect(result.mapped).toEqual({ t: ['Read', 'Contribute'] });
  });

  it('puts the files over the inline maps', () => {
    const compiled = compileAclMapping({ principals: { alice: 'inline@x' }, principalsFile: 'u.csv', unmapped: 'fail' }, 'cmis', 'graph', {
      principals: new Map([['Alice', 'file@x']]),
      groups: new Map([['team', 'team@x']]),
    });
    expect(mapAclEntries(compiled, ['alice:cmis:read', 'TEAM:cmis:write']).mapped).toEqual({ 'file@x': ['read'], 'team@x': ['write'] });
    expect(compiled.unmapped).toBe('fail');
  });

  it('describes what was not mapped, cutting long lists', () => {
    expect(describeUnmapped({ principals: ['a'], permissions: [] })).toBe("principal 'a'");
    expect(describeUnmapped({ principals: ['a', 'b', 'c'], permissions: ['p'] }, 2)).toBe("principals 'a', 'b' and 1 more; permission 'p'");
    expect(describeUnmapped({ principals: [], permissions: [] })).toBe('');
  });
});

describe('checkAclOptions', () => {
  const withAcls = (id: string, typeId: string) => ({ id, typeId, acls: {} }) as unknown as ContentConnector;
  const withoutAcls = (id: string) => ({ id, typeId: 'filesystem' }) as unknown as ContentConnector;
  const def = (options: Partial<JobDefinition['options']>) => ({ options }) as JobDefinition;
  const refusal = (fn: () => void): InvalidArgumentError => {
    try {
      fn();
    } catch (e) {
      if (e instanceof InvalidArgumentError) return e;
      throw e;
    }
    throw new Error('expected a refusal');
  };

  it('needs the acls group on both sides, naming the connector lacking it', () => {
    expect(() => checkAclOptions(def({ copyAcls: true }), withAcls('cmis', 'cmis'), withAcls('sp', 'sharepoint'))).not.toThrow();
    const e = refusal(() => checkAclOptions(def({ copyAcls: true }), withAcls('cmis', 'cmis'), withoutAcls('fs')));
    expect(e.parameter).toBe('options.copyAcls');
    expect(e.message).toContain("target connector 'fs' (filesystem) has no acls group");
    expect(refusal(() => checkAclOptions(def({ copyAcls: true }), withoutAcls('fs'), withAcls('sp', 'sharepoint'))).message).toContain("source connector 'fs'");
    // Without copyAcls nothing is asked of the connectors.
    expect(() => checkAclOptions(def({}), withoutAcls('a'), withoutAcls('b'))).not.toThrow();
  });

  it('refuses aclMapping without copyAcls', () => {
    const e = refusal(() => checkAclOptions(def({ aclMapping: { unmapped: 'drop' } }), withAcls('a', 'cmis'), withAcls('b', 'graph')));
    expect(e.parameter).toBe('options.aclMapping');
  });

  it.each([
    [{ principals: { '': 'x' } }, 'options.aclMapping.principals', 'a source name is empty'],
    [{ principals: { ' ': 'x' } }, 'options.aclMapping.principals', 'a source name is empty'],
    [{ groups: { g: '' } }, 'options.aclMapping.groups', "'g' maps to an empty name"],
    [{ permissions: { p: 7 } }, 'options.aclMapping.permissions', "'p' maps to something other than a name"],
    [{ principals: { Alice: 'a', alice: 'b' } }, 'options.aclMapping.principals', "'alice' is mapped twice (as 'Alice' too"],
    [{ principals: { alice: 'a' }, groups: { ALICE: 'g' } }, 'options.aclMapping.groups', "'ALICE' is mapped in both principals and groups"],
    [{ principals: { ['p'.repeat(257)]: 'a' } }, 'options.aclMapping.principals', 'names are at most 256 characters'],
  ])('refuses %j, naming the map', (maps, parameter, why) => {
    const e = refusal(() => checkAclOptions(def({ copyAcls: true, aclMapping: { ...maps, unmapped: 'drop' } as never }), withAcls('a', 'cmis'), withAcls('b', 'sharepoint')));
    expect(e.parameter).toBe(parameter);
    expect(e.message).toContain(why);
  });

  it('accepts one name in principals and permissions (different kinds of names)', () => {
    const ok = { copyAcls: true, aclMapping: { principals: { read: 'r' }, permissions: { read: 'Read' }, unmapped: 'drop' as const } };
    expect(() => checkAclOptions(def(ok), withAcls('a', 'cmis'), withAcls('b', 'sharepoint'))).not.toThrow();
  });
});
