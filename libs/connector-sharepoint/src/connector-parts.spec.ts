import { decodeCursor, encodeCursor, parseId, skiptokenOf } from './ids';
import { expanded, literal, query, readCollection, readEntity, readPrimitive } from './odata';
import { parseParams } from './params';
import { principalName } from './sharepoint.connector';

describe('SharePoint connector parts', () => {
  it('reads ids of documents, folders and versions, and refuses others naming the parameter', () => {
    const guid = '2FBB0C3C-4059-41A2-A5CF-3E076EA0A94C';
    expect(parseId(`f.${guid}`, 'id')).toEqual({ kind: 'file', uid: guid.toLowerCase() });
    expect(parseId(`d.${guid}`, 'id')).toEqual({ kind: 'folder', uid: guid.toLowerCase() });
    expect(parseId(`f.${guid}.v1024`, 'id')).toEqual({ kind: 'version', uid: guid.toLowerCase(), versionId: 1024 });
    for (const bad of [`d.${guid}.v512`, 'f.not-a-guid', `x.${guid}`, `f.${guid}/../x`, '']) {
      expect(() => parseId(bad, 'fileId')).toThrow(expect.objectContaining({ details: { parameter: 'fileId' } }));
    }
  });

  it("wraps SharePoint's skiptoken as an opaque cursor and refuses cursors it did not issue", () => {
    const token = skiptokenOf("https://x/sites/a/_api/web/lists/getbytitle(@t)/items?@t='Documents'&$top=2&$skiptoken=Paged%3DTRUE%26p_ID%3D7")!;
    expect(token).toBe('Paged=TRUE&p_ID=7');
    const cursor = encodeCursor(token);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toBe(token);
    for (const bad of ['!!not-a-cursor!!', Buffer.from('{"x":1}').toString('base64url'), Buffer.from('{"s":"a\\u0000"}').toString('base64url')]) {
      expect(() => decodeCursor(bad)).toThrow(expect.objectContaining({ details: { parameter: 'cursor' } }));
    }
  });

  it('reads verbose and light JSON alike', () => {
    expect(readEntity({ d: { Name: 'a' } })).toEqual({ Name: 'a' });
    expect(readEntity({ 'odata.type': 'SP.File', Name: 'a' })).toMatchObject({ Name: 'a' });
    expect(readCollection({ d: { results: [{ Id: 1 }], __next: 'https://n' } })).toEqual({ items: [{ Id: 1 }], next: 'https://n' });
    expect(readCollection({ value: [{ Id: 2 }], 'odata.nextLink': 'https://m' })).toEqual({ items: [{ Id: 2 }], next: 'https://m' });
    expect(readCollection({ value: [] })).toEqual({ items: [] });
    expect(() => readCollection({ d: {} })).toThrow(/without results/);
    expect(expanded({ File: { __deferred: { uri: 'u' } } }, 'File')).toBeUndefined();
    expect(expanded({ Roles: { results: [{ Id: 1 }] } }, 'Roles')).toEqual([{ Id: 1 }]);
    expect(readPrimitive({ d: { StartUpload: '10' } }, 'StartUpload')).toBe('10');
    expect(readPrimitive({ 'odata.metadata': 'm#Edm.Int64', value: '10' }, 'StartUpload')).toBe('10');
  });

  it("writes OData literals and aliases safely: quotes doubled, everything percent-encoded", () => {
    expect(literal("Adele's doc")).toBe("'Adele''s doc'");
    expect(query({ '@p': literal("/a b/c#d%'e"), $top: 3, skip: undefined })).toBe(`?@p=${encodeURIComponent("'/a b/c#d%''e'")}&$top=3`);
  });

  it('names principals as the gateway shows them', () => {
    expect(principalName({ PrincipalType: 1, LoginName: 'i:0#.f|membership|alice@contoso.com' })).toBe('alice@contoso.com');
    expect(principalName({ PrincipalType: 8, LoginName: 'Team Members', Title: 'Team Members' })).toBe('Team Members');
  });

  it('validates params naming the parameter; a certificate or a secret is required', () => {
    const base = { tenantId: 't', clientId: 'c', certificatePath: '/x.pem', siteUrl: 'https://contoso.sharepoint.com/sites/team/' };
    expect(parseParams(base)).toMatchObject({ siteUrl: 'https://contoso.sharepoint.com/sites/team', library: 'Documents', chunkThresholdBytes: 4 * 1024 * 1024, maxRetries: 4, authorityHost: 'https://login.microsoftonline.com' });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...base, certificatePath: undefined }, 'certificatePath'],
      [{ ...base, clientSecret: 's' }, 'clientSecret'],
      [{ ...base, siteUrl: 'http://contoso/sites/x' }, 'siteUrl'],
      [{ ...base, authorityHost: 'http://login' }, 'authorityHost'],
      [{ ...base, pageSize: 5001 }, 'pageSize'],
      [{ ...base, maxRetries: -1 }, 'maxRetries'],
      [{ ...base, colour: 'blue' }, 'colour'],
    ];
    for (const [params, parameter] of bad) expect(() => parseParams(params)).toThrow(expect.objectContaining({ details: { parameter } }));
  });
});
