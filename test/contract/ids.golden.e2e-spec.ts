import { decodeId as decodeFsId, encodeId as encodeFsId, encodeVersionId as encodeFsVersionId } from '../../libs/connector-filesystem/src/paths';
import { decodeId as decodeS3Id, encodeId as encodeS3Id } from '../../libs/connector-s3/src/keys';
import { fileId, folderId, parseId, versionId as sharePointVersionId } from '../../libs/connector-sharepoint/src/ids';
import { gatewayId, versionId as cmisVersionId } from '../../libs/connector-cmis/src/item-info';

/**
 * The ids each connector kind gives a location, written out. Changing any of them is a breaking change:
 * clients store ids, public links and audit records keep them, and none of those are rewritten when the
 * format moves. A new format needs a migration (and a decision record); it must not just update this table.
 *
 * The Graph connector has no id format of its own to pin: it hands out Graph's driveItem ids as they come,
 * and `<item id>;<Graph version id>` for a version (graph.connector.ts, listVersions).
 */

describe('Golden ids: filesystem (fs- + base64url of the path below the root; ;<n> a version)', () => {
  const GOLDEN: [path: string, id: string][] = [
    ['', 'fs-'],
    ['report.txt', 'fs-cmVwb3J0LnR4dA'],
    ['Projects/2026/plan.docx', 'fs-UHJvamVjdHMvMjAyNi9wbGFuLmRvY3g'],
    ['rapport été ✓ 日本.txt', 'fs-cmFwcG9ydCDDqXTDqSDinJMg5pel5pysLnR4dA'],
    ['a b+c%20d/x?y#z.bin', 'fs-YSBiK2MlMjBkL3g_eSN6LmJpbg'],
  ];

  it.each(GOLDEN)('%j is %s, and back', (rel, id) => {
    expect(encodeFsId(rel)).toBe(id);
    expect(decodeFsId(id, 'id')).toEqual({ rel });
  });

  it('names version 3 of a document <id>;3, and back', () => {
    expect(encodeFsVersionId('Projects/2026/plan.docx', 3)).toBe('fs-UHJvamVjdHMvMjAyNi9wbGFuLmRvY3g;3');
    expect(decodeFsId('fs-UHJvamVjdHMvMjAyNi9wbGFuLmRvY3g;3', 'id')).toEqual({ rel: 'Projects/2026/plan.docx', version: 3 });
  });
});

describe('Golden ids: S3 (s3- + base64url of the key below the prefix; ;<base64url VersionId> a version)', () => {
  const GOLDEN: [key: string, id: string][] = [
    ['', 's3-'],
    ['contract/', 's3-Y29udHJhY3Qv'],
    ['contract/report.txt', 's3-Y29udHJhY3QvcmVwb3J0LnR4dA'],
    ['contract/rapport été ✓ 日本.txt', 's3-Y29udHJhY3QvcmFwcG9ydCDDqXTDqSDinJMg5pel5pysLnR4dA'],
    ['a b+c%20d/x?y#z.bin', 's3-YSBiK2MlMjBkL3g_eSN6LmJpbg'],
  ];

  it.each(GOLDEN)('%j is %s, and back', (rel, id) => {
    expect(encodeS3Id(rel)).toBe(id);
    expect(decodeS3Id(id, 'id')).toEqual({ rel });
  });

  it('names a version by its S3 VersionId (MinIO-style, and the "null" of objects written before versioning)', () => {
    const minioVersion = '3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo';
    const id = 's3-Y29udHJhY3QvcmVwb3J0LnR4dA;M0hMNGtxdEpsY3BYcm9EVERtSitybVNwWGQzZElickhZK01UUkN4ZjN2alZCSDQwTnI4WDhnZFJRQnBVTUxVbw';
    expect(encodeS3Id('contract/report.txt', minioVersion)).toBe(id);
    expect(decodeS3Id(id, 'id')).toEqual({ rel: 'contract/report.txt', versionId: minioVersion });
    expect(encodeS3Id('contract/report.txt', 'null')).toBe('s3-Y29udHJhY3QvcmVwb3J0LnR4dA;bnVsbA');
  });
});

describe("Golden ids: SharePoint (f./d. + the object's UniqueId in lower case; .v<VersionId> an earlier version)", () => {
  const UNIQUE_ID = '0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9';

  it('gives a file, a folder and version 3.1 (3 × 512 + 1) their ids, and back', () => {
    expect(fileId(UNIQUE_ID)).toBe('f.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9');
    expect(folderId(UNIQUE_ID)).toBe('d.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9');
    expect(sharePointVersionId(UNIQUE_ID, 1537)).toBe('f.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9.v1537');
    expect(parseId('f.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', 'id')).toEqual({ kind: 'file', uid: '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9' });
    expect(parseId('d.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', 'id')).toEqual({ kind: 'folder', uid: '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9' });
    expect(parseId('f.0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9.v1537', 'id')).toEqual({ kind: 'version', uid: '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9', versionId: 1537 });
  });
});

describe("Golden ids: CMIS (a document's version series id, a folder's object id; <series>;<label> a version)", () => {
  const document = { 'cmis:baseTypeId': 'cmis:document', 'cmis:objectId': '2a9c4e;1.1', 'cmis:versionSeriesId': '2a9c4e', 'cmis:versionLabel': '1.1' };
  const unversioned = { 'cmis:baseTypeId': 'cmis:document', 'cmis:objectId': '77f0b1' };
  const folder = { 'cmis:baseTypeId': 'cmis:folder', 'cmis:objectId': '5d31aa', 'cmis:versionSeriesId': 'ignored-for-folders' };

  it('gives a document, a document outside any version series and a folder their ids, and versions theirs', () => {
    expect(gatewayId(document)).toBe('2a9c4e');
    expect(cmisVersionId(document)).toBe('2a9c4e;1.1');
    expect(gatewayId(unversioned)).toBe('77f0b1');
    expect(cmisVersionId(unversioned)).toBe('77f0b1;1.0');
    expect(gatewayId(folder)).toBe('5d31aa');
  });
});
