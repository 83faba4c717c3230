import type { ContentConnector, PropertyDefinition } from '@gateway/connector-api';
import { carriedStamp, propertyRoute, stampProperties } from './version-stamp-properties';

describe('version stamps as properties', () => {
  it('reads the carried original: an ISO date or epoch milliseconds, the author, the label; an unreadable date is left out', () => {
    expect(carriedStamp({ source_modified: '2001-02-03T04:05:06.789Z', source_author: 'bob', source_version: '3.0' })).toEqual({
      modified: new Date('2001-02-03T04:05:06.789Z'),
      modifiedBy: 'bob',
      version: '3.0',
    });
    expect(carriedStamp({ source_modified: String(Date.UTC(2001, 1, 3)) })).toEqual({ modified: new Date(Date.UTC(2001, 1, 3)) });
    expect(carriedStamp({ source_modified: 'last Tuesday', source_author: null, department: 'x' })).toEqual({});
    expect(carriedStamp(undefined)).toEqual({});
  });

  it('writes the date to the millisecond, the author and the label, and only those present', () => {
    expect(stampProperties({ modified: new Date('2001-02-03T04:05:06.789Z'), modifiedBy: 'bob', created: new Date(0) }, '1.0')).toEqual({
      source_modified: '2001-02-03T04:05:06.789Z',
      source_author: 'bob',
      source_version: '1.0',
    });
    expect(stampProperties({ modified: new Date(0) }, undefined)).toEqual({ source_modified: '1970-01-01T00:00:00.000Z' });
  });

  const target = (group: Partial<ContentConnector>) => ({ id: 't', ...group }) as unknown as ContentConnector;
  const declared = (defs: Array<Partial<PropertyDefinition> & { name: string }>) => ({
    updateProperties: () => Promise.resolve('x'),
    describeProperties: () => Promise.resolve(defs.map((d): PropertyDefinition => ({ kind: 'string', multiValue: false, writable: true, ...d }))),
  });

  it('writes them only where each version has properties of its own and the type declares the three, writable and single', async () => {
    const versioning = { listVersions: () => Promise.resolve([]), versionProperties: true };
    const all = [{ name: 'source_modified', kind: 'date' as const }, { name: 'source_author' }, { name: 'source_version' }];
    expect(await propertyRoute(target({ versioning, propertyUpdate: declared(all) }))).toEqual({ write: true });
    expect(await propertyRoute(target({ versioning }))).toEqual({ write: false, why: 'it keeps no properties either' });
    expect(await propertyRoute(target({ versioning: { listVersions: versioning.listVersions }, propertyUpdate: declared(all) }))).toMatchObject({
      write: false,
      why: expect.stringContaining("its properties are the document's, not each version's"),
    });
    const readOnlyAuthor = [all[0], { name: 'source_author', writable: false }, { name: 'source_version', multiValue: true }];
    expect(await propertyRoute(target({ versioning, propertyUpdate: declared(readOnlyAuthor) }))).toMatchObject({
      write: false,
      why: 'its document type does not declare source_author, source_version (writable single strings), which would keep them per version',
    });
  });
});
