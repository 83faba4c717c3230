import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InvalidArgumentError } from '@gateway/connector-api';
import { MAPPING_FILE } from '../../config/acl-mapping.dto';
import { mappingFilePath, MappingFileError, readMappingCsv } from './acl-mapping-csv';

describe('readMappingCsv', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'acl-csv-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const failure = async (text: string): Promise<MappingFileError> => {
    const error = await readMappingCsv(write('bad.csv', text), 'options.aclMapping.principalsFile').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MappingFileError);
    return error as MappingFileError;
  };

  it('reads source,target lines, with an optional header, a BOM, CRLF and a trailing newline', async () => {
    const map = await readMappingCsv(write('ok.csv', '\uFEFFsource,target\r\nalice, alice@contoso.com\r\nGROUP_X,Team X\r\n'), 'p');
    expect([...map]).toEqual([
      ['alice', 'alice@contoso.com'],
      ['GROUP_X', 'Team X'],
    ]);
  });

  it('reads thousands of lines', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `user${i},user${i}@contoso.com`).join('\n');
    const map = await readMappingCsv(write('big.csv', lines), 'p');
    expect(map.size).toBe(5000);
    expect(map.get('user4999')).toBe('user4999@contoso.com');
  });

  it.each([
    ['alice,a\nbob\n', 2, "expected 'source,target', found 0 commas"],
    ['alice,a\nbob,b,c\n', 2, "expected 'source,target', found 2 commas"],
    ['alice,a\n,b\n', 2, 'empty source'],
    ['alice,\n', 1, 'empty target'],
    ['alice,a\n\nbob,b\n', 2, 'empty line'],
    ['alice,a\nbob,b\nALICE,c\n', 3, "'ALICE' is mapped again (first on line 1)"],
    [`alice,${'x'.repeat(257)}\n`, 1, 'a name is longer than 256 characters'],
  ])('fails %j naming line %i', async (text, line, why) => {
    const error = await failure(text);
    expect(error.parameter).toBe('options.aclMapping.principalsFile');
    expect(error.message).toBe(`Invalid parameter 'options.aclMapping.principalsFile': bad.csv line ${line}: ${why}`);
  });

  it('accepts a source,target line after the first as data', async () => {
    expect([...(await readMappingCsv(write('h.csv', 'a,b\nsource,target\n'), 'p'))]).toEqual([
      ['a', 'b'],
      ['source', 'target'],
    ]);
  });

  it('names a missing file', async () => {
    await expect(readMappingCsv(path.join(dir, 'none.csv'), 'options.aclMapping.groupsFile', 'none.csv')).rejects.toThrow(
      "Invalid parameter 'options.aclMapping.groupsFile': cannot read none.csv (ENOENT)",
    );
  });
});

describe('mappingFilePath', () => {
  it('resolves under <dataDir>/mappings and refuses what leaves it', () => {
    expect(mappingFilePath('/data', 'users.csv')).toBe(path.resolve('/data/mappings/users.csv'));
    expect(mappingFilePath('/data', 'dept/users.csv')).toBe(path.resolve('/data/mappings/dept/users.csv'));
    expect(() => mappingFilePath('/data', '../secrets')).toThrow(InvalidArgumentError);
    expect(() => mappingFilePath('/data', '/etc/passwd')).toThrow(InvalidArgumentError);
  });
});

describe('MAPPING_FILE (the definition’s check of principalsFile / groupsFile)', () => {
  it.each(['users.csv', 'dept/users.csv', 'a..b.csv'])('accepts %j', (name) => expect(MAPPING_FILE.test(name)).toBe(true));
  it.each(['/etc/passwd', '../x.csv', 'a/../../b.csv', 'a/..', '..', 'a\\b.csv', ''])('refuses %j', (name) => expect(MAPPING_FILE.test(name)).toBe(false));
});
