import { ConflictError, NotSupportedError } from '@gateway/connector-api';
import type { AceChange, CmisAcl } from './cmis-client';
import { CmisAcls } from './cmis-acls';
import type { CmisConnector } from './cmis.connector';

/** The connector parts CmisAcls uses, over one object's ACL in memory (entries with isDirect as the repository reports it). */
function fakeConnector(aces: CmisAcl['aces']) {
  const acl: CmisAcl = { aces };
  const removals: AceChange[][] = [];
  const connector = {
    requireGroup: async () => undefined,
    userFor: () => 'admin',
    client: {
      getAcl: async () => acl,
      applyAcl: async (_id: string, _add: AceChange[], remove: AceChange[]) => {
        removals.push(remove);
        acl.aces = acl.aces.filter((ace) => ace.isDirect === false || !remove.some((r) => r.principal === ace.principal.principalId));
        return acl;
      },
    },
  } as unknown as CmisConnector;
  return { acls: new CmisAcls(connector), removals };
}

describe('CmisAcls.removeAcl and inherited entries', () => {
  const actor = { username: 'admin' };
  const aces = () => [
    { principal: { principalId: 'alice' }, permissions: ['cmis:read'], isDirect: true },
    { principal: { principalId: 'team' }, permissions: ['cmis:write'], isDirect: false },
  ];

  it('removes direct entries', async () => {
    const { acls, removals } = fakeConnector(aces());
    expect(await acls.removeAcl('doc-1', ['alice', 'nobody'], actor)).toEqual(['alice']);
    expect(removals).toEqual([[{ principal: 'alice', permissions: ['cmis:read'] }]]);
  });

  it('answers 409 ACL_INHERITED for a principal with only inherited entries, changing nothing', async () => {
    const { acls, removals } = fakeConnector(aces());
    const error = await acls.removeAcl('doc-1', ['alice', 'team'], actor).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: 'ACL_INHERITED', details: { principal: 'team', id: 'doc-1' } });
    expect(removals).toEqual([]);
  });

  it('answers 501 naming breakInheritance when asked to break it (CMIS has no such call)', async () => {
    const { acls } = fakeConnector(aces());
    await expect(acls.removeAcl('doc-1', ['team'], actor, { breakInheritance: true })).rejects.toMatchObject({ capability: 'breakInheritance' });
    await expect(acls.removeAcl('doc-1', ['team'], actor, { breakInheritance: true })).rejects.toBeInstanceOf(NotSupportedError);
    // Nothing inherited among the principals: breakInheritance has nothing to do.
    expect(await acls.removeAcl('doc-1', ['alice'], actor, { breakInheritance: true })).toEqual(['alice']);
  });
});
