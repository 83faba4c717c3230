import { ancestors, decodeCursor, decodeId, encodeCursor, encodeId, parseFolderPath, repoPath } from './keys';
import { applyChanges, decodeValue, encodeValue, parsePropertyChanges, propertiesOf } from './metadata';

describe('S3 ids', () => {
  it.each(['', 'a.txt', 'dir/', 'a b/c+d%20e.txt', 'été/日本/✓.bin', `${'deep/'.repeat(100)}leaf`, "q'(*)!~;=&$@,.txt"])('round-trip the key %j', (rel) => {
    expect(decodeId(encodeId(rel), 'id')).toEqual({ rel });
  });

  it('carry a version id, any characters, and only on documents', () => {
    expect(decodeId(encodeId('a.txt', 'v/1+=;x'), 'id')).toEqual({ rel: 'a.txt', versionId: 'v/1+=;x' });
    expect(() => decodeId(encodeId('dir/', 'v1'), 'id')).toThrow(/version/);
  });

  it.each([['fs-YQ'], ['s3-YQ=='], ['s3-!!'], ['s3-L2E'], ['s3-YS8vYg'], [''], ['s3-YQ;']])('refuse %j as an id of this repository', (id) => {
    expect(() => decodeId(id, 'id')).toThrow(expect.objectContaining({ parameter: 'id' }));
  });

  it('parse folder paths into folder keys, refusing . and .. and empty names', () => {
    expect(parseFolderPath('/', 'p')).toBe('');
    expect(parseFolderPath('/a/b/', 'p')).toBe('a/b/');
    expect(parseFolderPath('a b/c', 'p')).toBe('a b/c/');
    for (const bad of ['/a//b', '/a/../b', '/./a']) expect(() => parseFolderPath(bad, 'p')).toThrow(expect.objectContaining({ parameter: 'p' }));
    expect(repoPath('a/b/')).toBe('/a/b');
    expect(ancestors('a/b/c.txt')).toEqual(['a/', 'a/b/']);
    expect(ancestors('a/b/')).toEqual(['a/']);
  });

  it('wrap continuation tokens in printable cursors and refuse foreign ones', () => {
    const token = 'opaque token with ü and /+=';
    const cursor = encodeCursor(token);
    expect(cursor).toMatch(/^[\x21-\x7e]+$/);
    expect(decodeCursor(cursor)).toBe(token);
    expect(() => decodeCursor('!!not-a-cursor!!')).toThrow(expect.objectContaining({ parameter: 'cursor' }));
  });
});

describe('S3 properties', () => {
  it('store non-ASCII values as RFC 2047 encoded words and read them back', () => {
    expect(encodeValue('plain')).toBe('plain');
    expect(encodeValue('Zoë')).toBe(`=?UTF-8?B?${Buffer.from('Zoë').toString('base64')}?=`);
    expect(decodeValue(encodeValue('Zoë ✓'))).toBe('Zoë ✓');
    expect(decodeValue(encodeValue('=?looks encoded?='))).toBe('=?looks encoded?=');
  });

  it("apply changes, an empty value removing, and keep the gateway's own fields out of the properties", () => {
    const next = applyChanges({ reviewer: 'a', 'gateway-created-by': 'alice' }, [['reviewer', ''], ['status', 'final']]);
    expect(next).toEqual({ status: 'final', 'gateway-created-by': 'alice' });
    expect(propertiesOf(next)).toEqual({ status: 'final' });
  });

  it.each([['svc_filename'], ['1bad'], ['Upper'], ['gateway-created-by'], ['name'], ['with:colon']])('refuse the property name %j, naming it', (name) => {
    expect(() => parsePropertyChanges({ [name]: 'x' })).toThrow(expect.objectContaining({ parameter: name }));
  });

  it("refuse properties beyond S3's 2 KB of metadata", () => {
    expect(() => applyChanges({}, [['a', 'x'.repeat(1500)], ['b', 'y'.repeat(1500)]])).toThrow(expect.objectContaining({ parameter: 'properties' }));
  });
});
