import { EntryNames, sanitizeEntryName } from './zip-entry-names';

describe('sanitizeEntryName', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['a/b/c.txt', 'a/b/c.txt'],
    ['../../etc/passwd', 'etc/passwd'],
    ['/etc/passwd', 'etc/passwd'],
    ['a/../../b.txt', 'a/b.txt'],
    ['./a/./b.txt', 'a/b.txt'],
    ['C:\\Windows\\system32\\x.dll', 'C_/Windows/system32/x.dll'],
    ['\\\\server\\share\\x', 'server/share/x'],
    ['a//b', 'a/b'],
    ['what?.txt', 'what_.txt'],
    ['tab\there.txt', 'tab_here.txt'],
    ['trailing. ', 'trailing'],
    ['...', ''],
    ['..', ''],
    ['', ''],
    ['CON', '_CON'],
    ['nul.txt', '_nul.txt'],
    ['été/naïve.txt', 'été/naïve.txt'],
  ])('%j becomes %j', (raw, safe) => {
    expect(sanitizeEntryName(raw)).toBe(safe);
  });

  it('keeps names NFC-normalised and segments bounded', () => {
    expect(sanitizeEntryName('e\u0301te.txt')).toBe('\u00e9te.txt');
    const long = 'x'.repeat(500) + '.pdf';
    const safe = sanitizeEntryName(long);
    expect(safe.length).toBe(200);
    expect(safe.endsWith('.pdf')).toBe(true);
  });
});

describe('EntryNames', () => {
  it('numbers duplicates, case-insensitively, before the extension', () => {
    const names = new EntryNames(['errors.txt']);
    expect(names.claim('a.txt')).toBe('a.txt');
    expect(names.claim('a.txt')).toBe('a (1).txt');
    expect(names.claim('A.TXT')).toBe('A (2).TXT');
    expect(names.claim('a (1).txt')).toBe('a (1) (1).txt');
    expect(names.claim('errors.txt')).toBe('errors (1).txt');
    expect(names.claim('noext')).toBe('noext');
    expect(names.claim('noext')).toBe('noext (1)');
    expect(names.claim('.hidden')).toBe('.hidden');
    expect(names.claim('.hidden')).toBe('.hidden (1)');
  });

  it('never lets a file and a folder share a path', () => {
    const names = new EntryNames();
    expect(names.claim('docs')).toBe('docs');
    expect(names.claim('docs/a.txt')).toBe('docs (1)/a.txt');
    expect(names.claim('Docs/b.txt')).toBe('Docs (1)/b.txt');
    expect(names.claim('x/y/z.txt')).toBe('x/y/z.txt');
    expect(names.claim('x/y')).toBe('x/y (1)');
    expect(names.claim('x')).toBe('x (1)');
    expect(names.claim('x/y/z.txt')).toBe('x/y/z (1).txt');
  });
});
