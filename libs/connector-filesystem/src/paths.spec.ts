import { InvalidArgumentError } from '@gateway/connector-api';
import { decodeId, encodeId, encodeVersionId, isAddressableName, parseFolderPath, parseName } from './paths';

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
