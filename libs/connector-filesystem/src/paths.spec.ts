import { InvalidArgumentError } from '@gateway/connector-api';
import { decodeId, encodeId, encodeVersionId, isAddressableName, joinRel, nameOf, parentOf, parseFolderPath, parseName, repoPath } from './paths';

/** An id built the way the connector builds them, around an arbitrary (possibly hostile) path. */
const idOf = (raw: string) => 'fs-' + Buffer.from(raw, 'utf8').toString('base64url');

function refusal(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InvalidArgumentError) return e;
    throw e;
  }
  throw new Error('expected an InvalidArgumentError');
}

const HOSTILE_PATHS = [
  '..',
  '../outside',
  'a/../../outside',
  'a/..',
  './a',
  '/etc/passwd',
  'a//b',
  'a/',
  'a\\..\\b',
  '..\\outside',
  'a\u0000b',
  '%2e%2e',
  '%2E%2E/outside',
  '%252e%252e/outside',
  '%25252e%25252e',
  'a%2f..%2f..%2foutside',
  '..%2foutside',
  '%5c..%5coutside',
  '.gateway',
  '.gateway/docs',
  '.GATEWAY/format.json',
  '%2egateway',
  'a\nb',
];

describe('repository ids', () => {
  it('round-trip any valid path, including the root and non-ASCII names', () => {
    for (const rel of ['', 'a.txt', 'folder/sub/file name.pdf', 'résumé/日本語.txt', 'a/.gateway', '100%.txt', '%41']) {
      expect(decodeId(encodeId(rel), 'id')).toEqual({ rel });
    }
    expect(encodeId('')).toBe('fs-');
  });

  it('carry a version after a semicolon', () => {
    expect(encodeVersionId('a/b.txt', 3)).toBe(`${encodeId('a/b.txt')};3`);
    expect(decodeId(`${encodeId('a/b.txt')};12`, 'id')).toEqual({ rel: 'a/b.txt', version: 12 });
  });

  it.each(HOSTILE_PATHS)('refuse an id decoding to %j, naming the parameter', (raw) => {
    const error = refusal(() => decodeId(idOf(raw), 'fileId'));
    expect(error.parameter).toBe('fileId');
    expect(error.message).toContain("'fileId'");
  });

  it.each([
    ['foreign prefix', 'cmis-abc'],
    ['no prefix', 'YS50eHQ'],
    ['standard base64 characters', 'fs-YS+0eHQ/'],
    ['padding', 'fs-YQ=='],
    ['non-canonical trailing bits', 'fs-YR'],
    ['invalid UTF-8', 'fs-' + Buffer.from([0xff, 0xfe]).toString('base64url')],
    ['percent-encoded id', encodeURIComponent(idOf('../x'))],
    ['empty', ''],
    ['version zero', `${encodeId('a')};0`],
    ['version with leading zero', `${encodeId('a')};01`],
    ['non-numeric version', `${encodeId('a')};x`],
    ['empty version', `${encodeId('a')};`],
    ['second separator', `${encodeId('a')};1;2`],
    ['version of the root', 'fs-;1'],
  ])('refuse a malformed id (%s)', (_what, id) => {
    expect(refusal(() => decodeId(id, 'id')).parameter).toBe('id');
  });

  it('refuse values that are not strings', () => {
    expect(refusal(() => decodeId(undefined, 'id')).parameter).toBe('id');
    expect(refusal(() => decodeId(42, 'id')).parameter).toBe('id');
  });
});

describe('file names', () => {
  it('accept ordinary single names', () => {
    for (const name of ['a.txt', 'with space.pdf', 'résumé.docx', '100%.txt', '%41.txt', '...', '..a', 'a..', '.hidden']) {
      expect(parseName(name, 'fileName', '')).toBe(name);
    }
    expect(parseName('.gateway', 'fileName', 'sub')).toBe('.gateway');
  });

  it.each([
    '',
    '.',
    '..',
    'a/b',
    '/etc/passwd',
    '/abs',
    'a\\b',
    '..\\..\\x',
    'C:\\x',
    'x\u0000',
    'x\u0000.txt',
    '%2e%2e',
    '%2E%2e',
    '%252e%252e',
    '%2e',
    '%2f',
    'a%2fb',
    '%5c',
    '..%2f..%2fx',
    '%00',
    '.gateway',
    '.Gateway',
    '%2Egateway',
    'x'.repeat(256),
    'é'.repeat(128),
  ])('refuse %j as a fileName', (name) => {
    expect(refusal(() => parseName(name, 'fileName', '')).parameter).toBe('fileName');
  });

  it('refuse non-strings', () => {
    expect(refusal(() => parseName(undefined, 'fileName', '')).parameter).toBe('fileName');
  });

  it('leave unaddressable names out of listings', () => {
    expect(isAddressableName('a.txt', true)).toBe(true);
    expect(isAddressableName('.gateway', true)).toBe(false);
    expect(isAddressableName('.gateway', false)).toBe(true);
    expect(isAddressableName('%2e%2e', false)).toBe(false);
  });
});

describe('folder paths', () => {
  it('accept absolute and relative forms, with or without a trailing slash', () => {
    expect(parseFolderPath('/', 'folderPath')).toBe('');
    expect(parseFolderPath('', 'folderPath')).toBe('');
    expect(parseFolderPath('/a/b', 'folderPath')).toBe('a/b');
    expect(parseFolderPath('/a/b/', 'folderPath')).toBe('a/b');
    expect(parseFolderPath('a/b', 'folderPath')).toBe('a/b');
    expect(parseFolderPath('/a/.gateway', 'folderPath')).toBe('a/.gateway');
  });

  it.each([
    '/..',
    '/../outside',
    '/a/../../outside',
    '/a/./b',
    '//a',
    '/a//b',
    '/a/b//',
    '\\..\\outside',
    '/a\\b',
    '/a/\u0000',
    '/%2e%2e',
    '/a/%252e%252e/b',
    '/a%2f..%2f..',
    '/.gateway',
    '/.GATEWAY/docs',
  ])('refuse %j, naming the parameter', (value) => {
    expect(refusal(() => parseFolderPath(value, 'path')).parameter).toBe('path');
  });
});

describe('percent-encoding rounds', () => {
  // '..' percent-encoded once, twice, three and four times.
  const dotDot = ['%2e%2e', '%252e%252e', '%25252e%25252e', '%2525252e%2525252e'];

  it.each(dotDot.slice(0, 3))('refuse %j, a name decoding to .. within three rounds, as a dot name', (name) => {
    expect(refusal(() => parseName(name, 'fileName', '')).message).toContain("contains a '.' or '..' name");
  });

  it('refuse a name still decoding after three rounds, whatever it decodes to', () => {
    expect(refusal(() => parseName(dotDot[3], 'fileName', '')).message).toContain('percent-encoded too many times');
    // 'A' encoded four times is harmless, and refused all the same: the rule counts rounds, not outcomes.
    expect(refusal(() => parseName('%25252541', 'fileName', '')).message).toContain('percent-encoded too many times');
    expect(refusal(() => parseFolderPath('/a/%2525252e%2525252e', 'path')).message).toContain('percent-encoded too many times');
  });

  it('accept a harmless name that decodes for exactly three rounds', () => {
    expect(parseName('%252541', 'fileName', '')).toBe('%252541');
    expect(parseName('x%252541y.txt', 'fileName', '')).toBe('x%252541y.txt');
  });

  it('check every decoded form, not only the last one', () => {
    // 'x%252e%252e' decodes to the harmless 'x%2e%2e' and then to 'x..': fine; '%252e%252e' ends as '..'.
    expect(parseName('x%252e%252e', 'fileName', '')).toBe('x%252e%252e');
    // '%252f' decodes to '%2f' and then to '/': a separator two rounds down.
    expect(refusal(() => parseName('a%252fb', 'fileName', '')).message).toContain('contains a path separator inside a name');
    expect(refusal(() => parseName('a%5cb', 'fileName', '')).message).toContain('contains a path separator inside a name');
    expect(refusal(() => parseName('a%2500b', 'fileName', '')).message).toContain('contains a control character');
  });
});

describe('name length', () => {
  it('accept a name of exactly 255 bytes and refuse one of 256, counting UTF-8 bytes', () => {
    expect(parseName('x'.repeat(255), 'fileName', '')).toBe('x'.repeat(255));
    expect(parseName('é'.repeat(127) + 'x', 'fileName', '')).toBe('é'.repeat(127) + 'x');
    expect(refusal(() => parseName('x'.repeat(256), 'fileName', '')).message).toContain('longer than 255 bytes');
    expect(refusal(() => parseName('é'.repeat(128), 'fileName', '')).message).toContain('longer than 255 bytes');
  });

  it('apply to every segment of a folder path and of an id', () => {
    expect(parseFolderPath(`/a/${'x'.repeat(255)}`, 'path')).toBe(`a/${'x'.repeat(255)}`);
    expect(refusal(() => parseFolderPath(`/a/${'x'.repeat(256)}/b`, 'path')).message).toContain('longer than 255 bytes');
    expect(refusal(() => decodeId(idOf(`a/${'x'.repeat(256)}`), 'id')).message).toContain('longer than 255 bytes');
  });
});

describe('refusal messages', () => {
  it.each([
    ['', 'must be a non-empty name'],
    ['a/b', 'must be a single name without path separators'],
    ['a\\b', 'must be a single name without path separators'],
    ['..', "contains a '.' or '..' name"],
    ['.', "contains a '.' or '..' name"],
    ['x\u0001', 'contains a control character'],
    ['x\u007f', 'contains a control character'],
    ['x\u001f', 'contains a control character'],
    ['x\u0080', 'contains a control character'],
    ['x\u0085', 'contains a control character'],
    ['x\u009f', 'contains a control character'],
    ['.gateway', "'.gateway' is reserved for the repository's metadata"],
  ])('name the parameter and say why %j is refused as a fileName', (name, reason) => {
    expect(refusal(() => parseName(name, 'fileName', '')).message).toBe(`Invalid parameter 'fileName': ${reason}`);
  });

  it('accept characters just outside the control range', () => {
    expect(parseName('x\u0020y', 'fileName', '')).toBe('x y');
    expect(parseName('x\u00a0y', 'fileName', '')).toBe('x\u00a0y');
    expect(parseName('~', 'fileName', '')).toBe('~');
  });

  it.each([
    ['/a//b', 'contains an empty name'],
    ['\\a', 'must use / as the separator (backslash found)'],
    ['/.gateway', "'.gateway' is reserved for the repository's metadata"],
  ])('say why the folder path %j is refused', (value, reason) => {
    expect(refusal(() => parseFolderPath(value, 'path')).message).toBe(`Invalid parameter 'path': ${reason}`);
  });

  it('say why a folder path that is not a string is refused', () => {
    expect(refusal(() => parseFolderPath(7, 'path')).message).toBe("Invalid parameter 'path': must be a folder path");
  });

  it.each([
    ['', 'must be a repository id'],
    ['cmis-abc', 'is not an id of this repository'],
    ['fs-YS+0', 'is not an id of this repository'],
    ['fs-YR', 'is not an id of this repository'],
    ['fs-YQ==', 'is not an id of this repository'], // padding: not the canonical form
    ['fs-Y Q', 'is not an id of this repository'], // a character the decoder would skip
    [';1', 'is not an id of this repository'], // a version with no id before it
    [`${encodeId('a')};x`, 'has a malformed version suffix'],
    ['fs-;1', 'folders have no versions'],
    [idOf('a/../b'), "does not name an item of this repository (contains a '.' or '..' name)"],
  ])('say why the id %j is refused', (id, reason) => {
    expect(refusal(() => decodeId(id, 'id')).message).toBe(`Invalid parameter 'id': ${reason}`);
  });
});

describe('versions in ids', () => {
  it('accept the largest version of nine digits and refuse ten digits', () => {
    expect(decodeId(`${encodeId('a')};999999999`, 'id')).toEqual({ rel: 'a', version: 999_999_999 });
    expect(refusal(() => decodeId(`${encodeId('a')};1000000000`, 'id')).parameter).toBe('id');
    expect(decodeId(`${encodeId('a')};10`, 'id')).toEqual({ rel: 'a', version: 10 });
  });

  it('refuse a version with anything around the digits', () => {
    for (const suffix of ['1x', 'x1', ' 1', '1 ', '-1', '+1', '1.0']) {
      expect(refusal(() => decodeId(`${encodeId('a')};${suffix}`, 'id')).parameter).toBe('id');
    }
  });

  it('refuse an id with base64url characters around foreign ones', () => {
    expect(refusal(() => decodeId('fs-YQ.', 'id')).parameter).toBe('id');
    expect(refusal(() => decodeId('fs-.YQ', 'id')).parameter).toBe('id');
  });
});

describe('location helpers', () => {
  it('join, split and show locations', () => {
    expect(joinRel('', 'a')).toBe('a');
    expect(joinRel('a/b', 'c')).toBe('a/b/c');
    expect(parentOf('abc')).toBe('');
    expect(parentOf('a/b/c')).toBe('a/b');
    expect(nameOf('a')).toBe('a');
    expect(nameOf('a/b/c')).toBe('c');
    expect(repoPath('')).toBe('/');
    expect(repoPath('a/b')).toBe('/a/b');
  });

  it('reserve the metadata folder name at the root only, in every segment position of a path', () => {
    expect(parseFolderPath('/a/.gateway/b', 'path')).toBe('a/.gateway/b');
    expect(refusal(() => decodeId(idOf('.Gateway/x'), 'id')).parameter).toBe('id');
    expect(decodeId(idOf('x/.gateway'), 'id')).toEqual({ rel: 'x/.gateway' });
  });
});
