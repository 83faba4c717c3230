import { MICROSOFT_365_NAMING_RULES, nameViolations, NotFoundError, type ContentConnector, type ItemInfo, type NamingRules } from '@gateway/connector-api';
import { FILESYSTEM_NAMING_RULES, WINDOWS_FILESYSTEM_NAMING_RULES } from '@gateway/connector-filesystem';
import { s3NamingRules } from '@gateway/connector-s3';
import { lookAlike, NameRefused, renameNote, sanitizeName, shortHash, sourceNameOf, TargetNames, withHash } from './target-names';

const MS = MICROSOFT_365_NAMING_RULES;
const actor = { username: 'alice' };

describe('sanitizeName', () => {
  it.each([...`"*:<>?/\\|#%`])('replaces %s with its full-width look-alike for SharePoint and Graph', (c) => {
    const out = sanitizeName(`a${c}b.txt`, '/', MS);
    expect(out).toBe(`a${String.fromCodePoint(c.codePointAt(0)! + 0xfee0)}b.txt`);
    expect(nameViolations(out, MS)).toEqual([]);
  });

  it('maps : to U+FF1A as the README table says', () => {
    expect(lookAlike(':')).toBe('\uff1a');
    expect(sanitizeName('12:30 notes.txt', '/', MS)).toBe('12\uff1a30 notes.txt');
  });

  it('replaces controls with their pictures', () => {
    expect(sanitizeName('a\u0001b\u007f', '/', MS)).toBe('a\u2401b\u2421');
    expect(sanitizeName('a\u0085b', '/', FILESYSTEM_NAMING_RULES)).toBe('a\ufffdb');
  });

  it('replaces a refused first or last character, and only that one', () => {
    expect(sanitizeName('~draft.docx', '/', MS)).toBe('\uff5edraft.docx');
    expect(sanitizeName('report.', '/', MS)).toBe('report\uff0e');
    expect(sanitizeName('report..', '/', MS)).toBe('report.\uff0e');
    expect(sanitizeName(' report ', '/', MS)).toBe('\u2423report\u2423');
    expect(sanitizeName('report\u00a0', '/', MS)).toBe('report\u2423');
    expect(sanitizeName('a ', '/', WINDOWS_FILESYSTEM_NAMING_RULES)).toBe('a\u2423');
  });

  it('gives reserved names a suffix: whole names after them, Windows device stems after the stem', () => {
    expect(sanitizeName('CON', '/', MS)).toBe('CON_');
    expect(sanitizeName('com7', '/', MS)).toBe('com7_');
    expect(sanitizeName('.lock', '/', MS)).toBe('.lock_');
    expect(sanitizeName('Desktop.ini', '/', MS)).toBe('Desktop.ini_');
    expect(sanitizeName('CON.txt', '/', MS)).toBe('CON.txt'); // SharePoint refuses the name, not the stem
    expect(sanitizeName('CON.txt', '/', WINDOWS_FILESYSTEM_NAMING_RULES)).toBe('CON_.txt');
    expect(sanitizeName('lpt1.tar.gz', '/', WINDOWS_FILESYSTEM_NAMING_RULES)).toBe('lpt1_.tar.gz');
  });

  it('breaks every _vti_ in a name', () => {
    const out = sanitizeName('a_vti_b_VTI_c', '/', MS);
    expect(out).toBe('a_vti\uff3fb_VTI\uff3fc');
    expect(nameViolations(out, MS)).toEqual([]);
  });

  it('cuts a name too long between graphemes, keeps its extension, adds the hash of the source name', () => {
    const long = `${'é'.repeat(300)}.txt`;
    const out = sanitizeName(long, '/', MS);
    expect(out.length).toBeLessThanOrEqual(255);
    expect(out.endsWith(`~${shortHash(long)}.txt`)).toBe(true);
    // 255 bytes on a filesystem: a four-byte emoji is kept whole or left out, never cut.
    const emoji = `${'👩‍👩‍👧'.repeat(30)}.bin`;
    const fsOut = sanitizeName(emoji, '/', FILESYSTEM_NAMING_RULES);
    expect(Buffer.byteLength(fsOut)).toBeLessThanOrEqual(255);
    expect(fsOut).toMatch(/^(👩‍👩‍👧)+~[0-9a-f]{8}\.bin$/u);
  });

  it('gives two long names that share their start two different names, and the same name on every call', () => {
    const a = `${'x'.repeat(300)}a.txt`;
    const b = `${'x'.repeat(300)}b.txt`;
    expect(sanitizeName(a, '/', MS)).not.toBe(sanitizeName(b, '/', MS));
    expect(sanitizeName(a, '/', MS)).toBe(sanitizeName(a, '/', MS));
  });

  it('cuts a name to fit the path limit of its folder (S3: 1,024 bytes with the prefix)', () => {
    const rules = s3NamingRules('team/');
    const folder = `/${'f'.repeat(900)}`;
    const out = sanitizeName('n'.repeat(200), folder, rules);
    expect(Buffer.byteLength(`team/${folder.slice(1)}/${out}`)).toBeLessThanOrEqual(1024);
    expect(() => withHash('name', 'name', `/${'f'.repeat(1030)}`, rules)).toThrow(NameRefused);
  });

  it('makes each % full-width where a percent-decoded form would break a filesystem name', () => {
    const name = 'all \uff5c#% in one.txt'; // a stray % makes the lenient decoder read ｜ (U+FF5C) as \
    expect(nameViolations(name, FILESYSTEM_NAMING_RULES)).toEqual(['reads, percent-decoded, as a name with a forbidden character']);
    expect(sanitizeName(name, '/', FILESYSTEM_NAMING_RULES)).toBe('all \uff5c#\uff05 in one.txt');
    expect(sanitizeName('a%2Fb', '/', FILESYSTEM_NAMING_RULES)).toBe('a\uff052Fb');
    expect(nameViolations('100%.txt', FILESYSTEM_NAMING_RULES)).toEqual([]);
  });

  it("turns '.' and '..' into full-width dots", () => {
    expect(sanitizeName('.', '/', FILESYSTEM_NAMING_RULES)).toBe('\uff0e');
    expect(sanitizeName('..', '/', FILESYSTEM_NAMING_RULES)).toBe('\uff0e\uff0e');
  });
});

describe('TargetNames', () => {
  it('keeps a name the target takes, untouched', () => {
    const names = new TargetNames(MS, 'sanitize');
    expect(names.name('/docs', 'rapport été ✓ 日本.txt')).toBe('rapport été ✓ 日本.txt');
  });

  it('accepts every name when the target declares no rules', () => {
    const names = new TargetNames(undefined, 'refuse');
    expect(names.name('/', 'a:b|c')).toBe('a:b|c');
  });

  it('hashes the second of two names equal but for case on a case-insensitive target, and keeps each name stable', () => {
    const names = new TargetNames(MS, 'sanitize');
    expect(names.name('/d', 'Report.txt')).toBe('Report.txt');
    const second = names.name('/d', 'report.txt');
    expect(second).toBe(`report~${shortHash('report.txt')}.txt`);
    expect(names.name('/d', 'Report.txt')).toBe('Report.txt');
    expect(names.name('/d', 'report.txt')).toBe(second);
    // Another folder is another name.
    expect(names.name('/e', 'report.txt')).toBe('report.txt');
  });

  it('on a target comparing names exactly, remembers only sanitized names, and a later literal name equal to one is hashed', () => {
    const names = new TargetNames(FILESYSTEM_NAMING_RULES, 'sanitize');
    expect(names.name('/', 'a\\b')).toBe('a\uff3cb');
    expect(names.name('/', 'a\uff3cb')).toBe(`a\uff3cb~${shortHash('a\uff3cb')}`);
  });

  it('keeps both on a case-sensitive target', () => {
    const names = new TargetNames(FILESYSTEM_NAMING_RULES, 'sanitize');
    expect(names.name('/', 'Report.txt')).toBe('Report.txt');
    expect(names.name('/', 'report.txt')).toBe('report.txt');
  });

  it('hashes a sanitized name that another source name already is', () => {
    const names = new TargetNames(MS, 'sanitize');
    expect(names.name('/', 'a\uff1ab')).toBe('a\uff1ab');
    expect(names.name('/', 'a:b')).toBe(`a\uff1ab~${shortHash('a:b')}`);
  });

  it('tells NFC from NFD only where the target does', () => {
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    const insensitive: NamingRules = { ...FILESYSTEM_NAMING_RULES, normalizationInsensitive: true };
    const names = new TargetNames(insensitive, 'sanitize');
    expect(names.name('/', nfc)).toBe(nfc);
    expect(names.name('/', nfd)).toBe(`cafe\u0301~${shortHash(nfd)}.txt`);
    const sensitive = new TargetNames(FILESYSTEM_NAMING_RULES, 'sanitize');
    expect([sensitive.name('/', nfc), sensitive.name('/', nfd)]).toEqual([nfc, nfd]);
  });

  it('refuses, in mode refuse, a name the target refuses and a second source on one name', () => {
    const names = new TargetNames(MS, 'refuse');
    expect(() => names.name('/', 'a:b')).toThrow(/refuses the name 'a:b' \(contains ':'\)/);
    expect(names.name('/', 'A')).toBe('A');
    expect(() => names.name('/', 'a')).toThrow(/another source document has the target name 'a'/);
  });

  it('sanitizes each folder segment', () => {
    const names = new TargetNames(MS, 'sanitize');
    expect(names.folder('/target', 'q1: plans/drafts.')).toBe('/target/q1\uff1a plans/drafts\uff0e');
    expect(names.folder('/target', '.')).toBe('/target');
  });

  describe('place', () => {
    function targetWith(items: Record<string, Partial<ItemInfo>>): ContentConnector {
      const byPath = new Map(Object.entries(items).map(([p, item]) => [p.toLowerCase(), { id: p, name: p.slice(p.lastIndexOf('/') + 1), ...item }]));
      return {
        idByPath: (folder: string, name: string) => {
          const item = byPath.get(`${folder}/${name}`.toLowerCase());
          return item ? Promise.resolve(item.id) : Promise.reject(new NotFoundError('item', name));
        },
        getItem: (id: string) => Promise.resolve(byPath.get(id.toLowerCase())),
      } as unknown as ContentConnector;
    }

    it('writes over nothing where the name is free', async () => {
      const names = new TargetNames(MS, 'sanitize');
      await expect(names.place(targetWith({}), '/d', 'a.txt', 'a.txt')).resolves.toEqual({ name: 'a.txt' });
    });

    it("finds this source's own copy by its name or its source_name", async () => {
      const names = new TargetNames(MS, 'sanitize');
      const target = targetWith({ '/d/a.txt': {}, '/d/b\uff1ac': { properties: { source_name: 'b:c' } } });
      await expect(names.place(target, '/d', 'a.txt', 'a.txt')).resolves.toEqual({ name: 'a.txt', existing: '/d/a.txt' });
      await expect(names.place(target, '/d', 'b\uff1ac', 'b:c')).resolves.toEqual({ name: 'b\uff1ac', existing: '/d/b\uff1ac' });
    });

    it("moves to the hashed name where another source's copy holds the name (a case-insensitive match at the target)", async () => {
      const names = new TargetNames(MS, 'sanitize');
      const hashed = `A~${shortHash('A.txt')}.txt`;
      await expect(names.place(targetWith({ '/d/a.txt': {} }), '/d', 'A.txt', 'A.txt')).resolves.toEqual({ name: hashed });
      const later = targetWith({ '/d/a.txt': {}, [`/d/${hashed}`]: { properties: { source_name: 'A.txt' } } });
      await expect(names.place(later, '/d', 'A.txt', 'A.txt')).resolves.toEqual({ name: hashed, existing: `/d/${hashed}` });
      // A target that kept no source_name: the hash in the name says whose it is.
      const bare = targetWith({ '/d/a.txt': {}, [`/d/${hashed}`]: {} });
      await expect(names.place(bare, '/d', 'A.txt', 'A.txt')).resolves.toEqual({ name: hashed, existing: `/d/${hashed}` });
      const other = targetWith({ '/d/a.txt': {}, [`/d/${hashed}`]: { properties: { source_name: 'someone else' } } });
      await expect(names.place(other, '/d', 'A.txt', 'A.txt')).rejects.toThrow(NameRefused);
    });
  });
});

describe('renameNote', () => {
  function target(update?: jest.Mock): ContentConnector {
    return (update ? { propertyUpdate: { updateProperties: update } } : {}) as unknown as ContentConnector;
  }

  it('says nothing of a document not renamed', async () => {
    await expect(renameNote(target(), 'id', { sourceName: 'a', targetPath: '/t/a', renamed: false }, '/s/a', actor)).resolves.toBeUndefined();
  });

  it('notes the rename and keeps the source name as source_name', async () => {
    const update = jest.fn().mockResolvedValue('id');
    const note = await renameNote(target(update), 'id', { sourceName: 'a:b', targetPath: '/t/a\uff1ab', renamed: true }, '/s/a:b', actor);
    expect(note).toBe('renamed: /s/a:b → /t/a\uff1ab');
    expect(update).toHaveBeenCalledWith('id', { source_name: 'a:b' }, actor);
  });

  it('keeps no source_name where the copy back restored it, and says so where the target cannot keep it', async () => {
    const update = jest.fn();
    expect(await renameNote(target(update), 'id', { sourceName: 'a:b', targetPath: '/back/a:b', renamed: true }, '/t/a\uff1ab', actor)).toBe('renamed: /t/a\uff1ab → /back/a:b');
    expect(update).not.toHaveBeenCalled();
    expect(await renameNote(target(), 'id', { sourceName: 'a:b', targetPath: '/t/a\uff1ab', renamed: true }, '/s/a:b', actor)).toMatch(/keeps no properties/);
    const failing = jest.fn().mockRejectedValue(new NotFoundError('column', 'source_name'));
    expect(await renameNote(target(failing), 'id', { sourceName: 'a:b', targetPath: '/t/a\uff1ab', renamed: true }, '/s/a:b', actor)).toMatch(/source_name not kept \(COLUMN_NOT_FOUND: /);
  });
});

describe('sourceNameOf', () => {
  it('is the listed source_name, else the last segment of rel', () => {
    expect(sourceNameOf({ rel: 'a/b\uff1ac', sourceName: 'b:c' })).toBe('b:c');
    expect(sourceNameOf({ rel: 'a/b.txt' })).toBe('b.txt');
  });
});

describe('the README example', () => {
  it('cuts 300 × é.txt to 242 × é~83de634e.txt for SharePoint', () => {
    expect(sanitizeName(`${'é'.repeat(300)}.txt`, '/', MS)).toBe(`${'é'.repeat(242)}~83de634e.txt`);
  });
});
