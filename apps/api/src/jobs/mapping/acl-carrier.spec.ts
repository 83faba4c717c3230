import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AclCapability, Actor, ContentConnector } from '@gateway/connector-api';
import type { AclMapping } from '../../config/acl-mapping.dto';
import { AclCarrier } from './acl-carrier';

/** A connector with an ACL store in memory: what getAcl answers, what applyAcl received. */
function connector(typeId: string, acl: Record<string, string[]> = {}) {
  const applied: Array<{ id: string; entries: Record<string, string[]>; actor: Actor }> = [];
  const acls: AclCapability = {
    getAcl: async (id) => acl[id] ?? [],
    applyAcl: async (id, entries, actor) => {
      applied.push({ id, entries, actor });
      return [];
    },
    removeAcl: async () => [],
  };
  return { connector: { id: typeId, typeId, acls } as unknown as ContentConnector, applied };
}

describe('AclCarrier', () => {
  const actor = { username: 'runner' };
  let dataDir: string;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'acl-carrier-'));
    fs.mkdirSync(path.join(dataDir, 'mappings'));
    fs.writeFileSync(path.join(dataDir, 'mappings', 'users.csv'), 'alice,alice@contoso.com\n');
    fs.writeFileSync(path.join(dataDir, 'mappings', 'bad.csv'), 'alice,alice@contoso.com\nbob\n');
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const carrier = (mapping: AclMapping | undefined, sourceAcl: Record<string, string[]>, sourceType = 'cmis', targetType = 'sharepoint') => {
    const source = connector(sourceType, sourceAcl);
    const target = connector(targetType);
    return { carrier: new AclCarrier(mapping, source.connector, target.connector, dataDir), applied: target.applied };
  };

  it('applies the mapped entries to the copy and warns about what it dropped', async () => {
    const { carrier: c, applied } = carrier({ principalsFile: 'users.csv', unmapped: 'drop' }, { s1: ['alice:cmis:read', 'anyone:cmis:all'] });
    expect(await c.apply('t1', await c.plan('s1'), actor)).toBe("permissions: dropped unmapped principal 'anyone'");
    expect(applied).toEqual([{ id: 't1', entries: { 'alice@contoso.com': ['Read'] }, actor }]);
  });

  it('answers no warning when everything mapped, and makes no call when nothing is left to apply', async () => {
    const { carrier: c, applied } = carrier({ principals: { alice: 'a@x' }, unmapped: 'drop' }, { s1: ['alice:cmis:write'], s2: ['bob:cmis:read'] });
    expect(await c.apply('t1', await c.plan('s1'), actor)).toBeUndefined();
    expect(await c.apply('t2', await c.plan('s2'), actor)).toBe("permissions: dropped unmapped principal 'bob'");
    expect(applied.map((a) => a.id)).toEqual(['t1']);
  });

  it('fails naming the unmapped principal under unmapped: fail, before anything is applied', async () => {
    const { carrier: c, applied } = carrier({ principals: { alice: 'a@x' }, unmapped: 'fail' }, { s1: ['alice:cmis:read', 'stranger:cmis:read'] });
    await expect(c.plan('s1')).rejects.toMatchObject({ code: 'ACL_UNMAPPED', message: expect.stringContaining("principal 'stranger'") });
    expect(applied).toEqual([]);
  });

  it('rejects ready() naming the file and the line of a bad mapping file', async () => {
    const { carrier: c } = carrier({ principalsFile: 'bad.csv', unmapped: 'drop' }, {});
    await expect(c.ready()).rejects.toThrow("Invalid parameter 'options.aclMapping.principalsFile': bad.csv line 2: expected 'source,target', found 0 commas");
    await expect(c.plan('s1')).rejects.toThrow('bad.csv line 2');
  });

  it('reads its files once per run', async () => {
    const { carrier: c } = carrier({ principalsFile: 'users.csv', unmapped: 'drop' }, {});
    const first = c.ready();
    expect(c.ready()).toBe(first);
    expect((await first).principals.get('alice')).toBe('alice@contoso.com');
  });
});
