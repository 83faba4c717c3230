import { createReadStream } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { InvalidArgumentError } from '@gateway/connector-api';

/** Mapping files live here, under the gateway's data directory: a job names them relative to it. */
export const MAPPINGS_FOLDER = 'mappings';

/** Longest principal either side, as the ACL routes take them. */
export const MAX_PRINCIPAL = 256;

/** A line of a mapping file that cannot be read: the run fails naming the file and the line. */
export class MappingFileError extends InvalidArgumentError {
  constructor(parameter: string, file: string, line: number, why: string) {
    super(parameter, `Invalid parameter '${parameter}': ${file} line ${line}: ${why}`, 'INVALID_MAPPING_FILE');
  }
}

/** `<dataDir>/mappings/<name>`; the definition already refused absolute names and `..` (MAPPING_FILE). */
export function mappingFilePath(dataDir: string, name: string): string {
  const folder = path.resolve(dataDir, MAPPINGS_FOLDER);
  const file = path.resolve(folder, name);
  if (!file.startsWith(folder + path.sep)) throw new InvalidArgumentError('options.aclMapping', `Invalid parameter 'options.aclMapping': '${name}' is outside ${MAPPINGS_FOLDER}/`);
  return file;
}

/**
 * Reads a `source,target` CSV, line by line (files of thousands of users stream). A first line
 * `source,target` is a header; a byte-order mark and CR line ends are accepted, as is one trailing
 * newline. Every other line must be two non-empty names of at most 256 characters around one comma,
 * each source once (compared case-insensitively): otherwise MappingFileError naming the line.
 * Principal ids hold no comma (the ACL routes refuse them), so no quoting is needed or read.
 */
export async function readMappingCsv(file: string, parameter: string, display = path.basename(file)): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const seen = new Map<string, number>();
  const stream = createReadStream(file, { encoding: 'utf8' });
  const opened = new Promise<void>((resolve, reject) => {
    stream.once('open', () => resolve());
    stream.once('error', reject);
  });
  try {
    await opened;
  } catch (e) {
    throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': cannot read ${display} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, 'INVALID_MAPPING_FILE');
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  let blankAt: number | undefined;
  try {
    for await (const raw of lines) {
      number++;
      const line = (number === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
      // A blank line is bad unless nothing follows it (readline yields no line for the final newline).
      if (blankAt !== undefined) throw new MappingFileError(parameter, display, blankAt, 'empty line');
      if (line === '') {
        blankAt = number;
        continue;
      }
      if (number === 1 && line.toLowerCase().replace(/\s/g, '') === 'source,target') continue;
      const parts = line.split(',');
      if (parts.length !== 2) throw new MappingFileError(parameter, display, number, `expected 'source,target', found ${parts.length - 1} commas`);
      const [from, to] = parts.map((p) => p.trim());
      if (from === '' || to === '') throw new MappingFileError(parameter, display, number, `empty ${from === '' ? 'source' : 'target'}`);
      if (from.length > MAX_PRINCIPAL || to.length > MAX_PRINCIPAL) throw new MappingFileError(parameter, display, number, `a name is longer than ${MAX_PRINCIPAL} characters`);
      const key = from.toLowerCase();
      const first = seen.get(key);
      if (first !== undefined) throw new MappingFileError(parameter, display, number, `'${from}' is mapped again (first on line ${first})`);
      seen.set(key, number);
      out.set(from, to);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
  return out;
}
