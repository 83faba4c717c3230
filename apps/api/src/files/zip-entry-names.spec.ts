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
    ['all<of>the:"windows|refuses?*.txt', 'all_of_the__windows_refuses__.txt'],
    ['ctl\u0001\u001f\u007f.txt', 'ctl___.txt'],
    ['  padded  ', 'padded'],
    ['trailing. . .', 'trailing'],
    ['report.\u00a0', 'report'],
    ['a/..\u2003/b', 'a/b'],
    ['CON', '_CON'],
    ['con', '_con'],
    ['nul.txt', '_nul.txt'],
    ['PRN', '_PRN'],
    ['aux.tar.gz', '_aux.tar.gz'],
    ['COM1', '_COM1'],
    ['com9.log', '_com9.log'],
    ['LPT1', '_LPT1'],
    ['lpt9', '_lpt9'],
    ['CON. ', '_CON'],
    ['docs/NUL/x.txt', 'docs/_NUL/x.txt'],
    ['console.log', 'console.log'],
    ['falcon.txt', 'falcon.txt'],
    ['com0', 'com0'],
    ['COM10', 'COM10'],
    ['lpt', 'lpt'],
    ['auxiliary.txt', 'auxiliary.txt'],
    ['xnul', 'xnul'],
    ['nulx.txt', 'nulx.txt'],
    ['été/naïve.txt', 'été/naïve.txt'],
  ])('%j becomes %j', (raw, safe) => {
    expect(sanitizeEntryName(raw)).toBe(safe);
  });

  it('keeps names NFC-normalised', () => {
    expect(sanitizeEntryName('e\u0301te.txt')).toBe('\u00e9te.txt');
  });

  it('is empty for no name at all', () => {
    expect(sanitizeEntryName(undefined)).toBe('');
    expect(sanitizeEntryName('/./../')).toBe('');
  });

  it('leaves a name of 200 characters whole and cuts a longer one to 200, keeping its extension', () => {
    const exact = 'x'.repeat(196) + '.pdf';
    expect(sanitizeEntryName(exact)).toBe(exact);
    expect(sanitizeEntryName('x'.repeat(500) + '.pdf')).toBe('x'.repeat(196) + '.pdf');
    expect(sanitizeEntryName('y'.repeat(197) + '.pdf')).toBe('y'.repeat(196) + '.pdf');
  });

  it('counts characters, not UTF-16 units, when cutting', () => {
    expect(sanitizeEntryName('😀'.repeat(300) + '.txt')).toBe('😀'.repeat(196) + '.txt');
    expect(sanitizeEntryName('😀'.repeat(200))).toBe('😀'.repeat(200));
  });

  it('keeps an extension of up to 20 characters (the dot included) when cutting, and drops a longer one', () => {
    const ext20 = '.' + 'e'.repeat(19);
    expect(sanitizeEntryName('x'.repeat(300) + ext20)).toBe('x'.repeat(180) + ext20);
    const ext21 = '.' + 'e'.repeat(20);
    expect(sanitizeEntryName('x'.repeat(300) + ext21)).toBe('x'.repeat(200));
  });

  it('treats a leading dot as part of the name, not an extension, when cutting', () => {
    expect(sanitizeEntryName('.' + 'x'.repeat(300))).toBe('.' + 'x'.repeat(199));
  });

  it('leaves no dot or space at the end of a name it cut', () => {
    expect(sanitizeEntryName('x'.repeat(198) + '. y' + 'z'.repeat(100))).toBe('x'.repeat(198));
    expect(sanitizeEntryName('. ' + ' '.repeat(300) + 'x')).toBe('');
  });

  it('keeps the innermost 32 levels of a deeper path', () => {
    const levels = Array.from({ length: 40 }, (_, i) => `d${i}`);
    const safe = sanitizeEntryName(levels.join('/'));
    expect(safe.split('/')).toEqual(levels.slice(8));
    const exact = levels.slice(0, 32).join('/');
    expect(sanitizeEntryName(exact)).toBe(exact);
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
    const names = new EntryNames([]);
    expect(names.claim('docs')).toBe('docs');
    expect(names.claim('docs/a.txt')).toBe('docs (1)/a.txt');
    expect(names.claim('Docs/b.txt')).toBe('Docs (1)/b.txt');
    expect(names.claim('x/y/z.txt')).toBe('x/y/z.txt');
    expect(names.claim('x/y')).toBe('x/y (1)');
    expect(names.claim('x')).toBe('x (1)');
    expect(names.claim('x/y/z.txt')).toBe('x/y/z (1).txt');
  });

  it('moves a file away from a folder that clashes with it two levels deep, and back', () => {
    const names = new EntryNames([]);
    expect(names.claim('a/b')).toBe('a/b');
    expect(names.claim('a/b/c.txt')).toBe('a/b (1)/c.txt');
    expect(names.claim('a/B/d.txt')).toBe('a/B (1)/d.txt');
    expect(names.claim('p/q/r/s.txt')).toBe('p/q/r/s.txt');
    expect(names.claim('p/q/r')).toBe('p/q/r (1)');
    expect(names.claim('P/Q')).toBe('P/Q (1)');
    expect(names.claim('p/q/r/t.txt')).toBe('p/q/r/t.txt');
  });

  it('moves a file away from a file it would need as a folder three levels deep', () => {
    const names = new EntryNames([]);
    expect(names.claim('a/b/c')).toBe('a/b/c');
    expect(names.claim('a/b/c/d.txt')).toBe('a/b/c (1)/d.txt');
    expect(names.claim('a/b/c/e/f.txt')).toBe('a/b/c (1)/e/f.txt');
  });

  it('numbers a renamed folder past every file already holding the name', () => {
    const names = new EntryNames(['docs', 'docs (1)']);
    expect(names.claim('docs/a.txt')).toBe('docs (2)/a.txt');
    expect(names.claim('docs (2)')).toBe('docs (2) (1)');
  });

  it('keeps reserved names and their folders away from claimed ones', () => {
    const names = new EntryNames(['errors.txt', 'meta/index.json']);
    expect(names.claim('meta')).toBe('meta (1)');
    expect(names.claim('meta/index.json')).toBe('meta/index (1).json');
    expect(names.claim('meta/other.json')).toBe('meta/other.json');
  });
});
