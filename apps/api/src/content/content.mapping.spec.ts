import { InvalidArgumentError, type ItemInfo } from '@gateway/connector-api';
import { collectProperties, toFolderItemEntry, toFolderListing, toPropertyMap, toVersionEntry } from './content.mapping';

const created = new Date('2024-01-02T03:04:05.678Z');
const modified = new Date('2024-06-07T08:09:10.111Z');

const doc: ItemInfo = {
  id: 'fs-ZG9jLnR4dA',
  name: 'doc.txt',
  path: '/folder/doc.txt',
  baseType: 'document',
  typeId: 'file',
  mimeType: 'text/plain',
  size: 1234,
  created,
  modified,
  createdBy: 'alice',
  modifiedBy: 'bob',
  checkedOut: true,
  checkedOutBy: 'bob',
  checkinComment: 'second draft',
  versionCount: 2,
  versionLabel: '2.0',
  versionSeriesId: 'fs-ZG9jLnR4dA',
  etag: 'abc',
  properties: { department: 'finance', reviewer: null },
};

const folder: ItemInfo = { id: 'fs-Zm9sZGVy', name: 'folder', path: '/folder', baseType: 'folder' };

describe('toFolderItemEntry (spec 2.3)', () => {
  it('renders every member as a string: numbers as decimal, dates as epoch milliseconds, booleans as true/false', () => {
    expect(toFolderItemEntry(doc)).toEqual({
      BaseType: 'document',
      CheckedOut: 'true',
      CheckinComment: 'second draft',
      ContentLength: '1234',
      CreatedBy: 'alice',
      CreatedDate: String(created.getTime()),
      Description: null,
      Id: 'fs-ZG9jLnR4dA',
      ItemPath: '/folder/doc.txt',
      MimeType: 'text/plain',
      ModifiedBy: 'bob',
      ModifiedDate: String(modified.getTime()),
      Name: 'doc.txt',
      SitePath: null,
      SvcType: 'document',
      Type: 'file',
      VersionCount: '2',
      VersionLabel: '2.0',
      VersionSeriesId: 'fs-ZG9jLnR4dA',
    });
  });

  it("gives null for what the driver does not know, 'false' for no check-out and '-1' for uncounted versions", () => {
    const entry = toFolderItemEntry(folder);
    expect(entry).toMatchObject({ CheckedOut: 'false', VersionCount: '-1', ContentLength: null, CreatedDate: null, MimeType: null, Type: null, VersionSeriesId: null });
    for (const value of Object.values(entry)) expect(value === null || typeof value === 'string').toBe(true);
  });

  it('treats an invalid date as absent rather than rendering NaN', () => {
    expect(toFolderItemEntry({ ...doc, modified: new Date('garbage') }).ModifiedDate).toBeNull();
  });
});

describe('toFolderListing', () => {
  it('keys every entry by its path, in the order given', () => {
    const listing = toFolderListing([folder, doc]);
    expect(Object.keys(listing)).toEqual(['/folder', '/folder/doc.txt']);
    for (const [key, entry] of Object.entries(listing)) expect(entry.ItemPath).toBe(key);
  });
});

describe('toVersionEntry (spec 2.4)', () => {
  it('keeps integers as integers and a missing name as null', () => {
    expect(toVersionEntry({ id: 'x;1', label: '1.0', size: 10, modified, versionSeriesId: 'x' })).toEqual({
      docId: 'x;1',
      lastModified: modified.getTime(),
      name: null,
      versionLabel: '1.0',
      versionLength: 10,
      versionSeriesId: 'x',
    });
  });
});

describe('toPropertyMap (spec 2.5)', () => {
  it('puts the value inside the brackets of DisplayName and the label in QueryName', () => {
    const map = toPropertyMap(doc);
    expect(map).toEqual({
      svc_created: { DisplayName: `[${created.getTime()}]`, QueryName: 'Created' },
      svc_last_modified: { DisplayName: `[${modified.getTime()}]`, QueryName: 'Last Modified' },
      svc_filename: { DisplayName: '[doc.txt]', QueryName: 'File Name' },
      svc_content_type: { DisplayName: '[text/plain]', QueryName: 'Mime Type' },
      svc_length: { DisplayName: '[1234]', QueryName: 'Content Length' },
      department: { DisplayName: '[finance]', QueryName: 'department' },
      reviewer: { DisplayName: '[]', QueryName: 'reviewer' },
    });
  });

  it('always has the five svc_ properties, with [] for what a folder lacks', () => {
    const map = toPropertyMap(folder);
    expect(Object.keys(map)).toEqual(['svc_created', 'svc_last_modified', 'svc_filename', 'svc_content_type', 'svc_length']);
    expect(map.svc_length.DisplayName).toBe('[]');
  });

  it('never lets a custom property shadow an svc_ one', () => {
    const map = toPropertyMap({ ...doc, properties: { svc_filename: 'forged' } });
    expect(map.svc_filename.DisplayName).toBe('[doc.txt]');
  });
});

describe('collectProperties', () => {
  const reserved = ['fileId', 'type'];

  it("takes every parameter but the route's own", () => {
    expect(collectProperties({ fileId: 'x', type: 'file', department: 'finance', 'ref.code': 'A-1', empty: '' }, reserved)).toEqual({
      department: 'finance',
      'ref.code': 'A-1',
      empty: '',
    });
    expect(collectProperties({ fileId: 'x' }, reserved)).toEqual({});
  });

  it.each([
    ['a repeated parameter', { twice: ['a', 'b'] }, 'twice'],
    ['an svc_ name', { svc_filename: 'x' }, 'svc_filename'],
    ['an svc_ name in another case', { SVC_length: '1' }, 'SVC_length'],
    ['a name starting with a digit', { '1abc': 'x' }, '1abc'],
    ['a name with a space', { 'a b': 'x' }, 'a b'],
    ['a bracketed name', { 'a[b]': 'x' }, 'a[b]'],
  ])('refuses %s, naming it', (_what, query, parameter) => {
    let error: unknown;
    try {
      collectProperties(query, reserved);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).parameter).toBe(parameter);
  });
});
