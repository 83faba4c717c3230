import { InvalidArgumentError } from '@gateway/connector-api';
import type { BatchEntry } from './batch-zip';

type Field = 'id' | 'conn' | 'fname';
const PLAIN = /^(id|conn|fname)(\d{1,9})$/;
const BRACKETED = /^(id|conn|fname)\[(\d{1,9})\]$/;

/**
 * The GET __BATCH__ form's parameters: `id<x>`, `conn<x>`, `fname<x>` for
 * each integer x, or the bracketed `id[x]`, `conn[x]`, `fname[x]` (both may
 * be mixed). Entries come out in ascending x. Each x needs an id and a conn;
 * fname is optional (default: the document name). Other names are refused
 * before this runs (the route's @AcceptsQuery).
 */
export function parseLegacyBatchQuery(query: Record<string, unknown>, maxEntries: number): BatchEntry[] {
  const byIndex = new Map<number, Partial<Record<Field, string>>>();
  const set = (field: Field, index: number, value: unknown, parameter: string) => {
    if (typeof value !== 'string') {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': give it once, as a string`);
    }
    const entry = byIndex.get(index) ?? {};
    if (entry[field] !== undefined && entry[field] !== value) {
      throw new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': ${field}${index} and ${field}[${index}] disagree`);
    }
    entry[field] = value;
    byIndex.set(index, entry);
  };
  for (const [name, value] of Object.entries(query)) {
    const m = PLAIN.exec(name) ?? BRACKETED.exec(name);
    if (m) {
      set(m[1] as Field, Number(m[2]), value, name);
      continue;
    }
    // A query parser that nests brackets (qs) hands id[x] over as id: { x: value } or an array.
    if ((name === 'id' || name === 'conn' || name === 'fname') && value !== null && typeof value === 'object') {
      for (const [index, v] of Object.entries(value as Record<string, unknown>)) {
        if (!/^\d{1,9}$/.test(index)) throw new InvalidArgumentError(`${name}[${index}]`, `Invalid parameter '${name}[${index}]': the index must be an integer`);
        set(name, Number(index), v, `${name}[${index}]`);
      }
    }
  }
  if (byIndex.size === 0) {
    throw new InvalidArgumentError('id0', "Invalid parameter 'id0': id0 is required: give at least one document as id<x>=<file id>&conn<x>=<connector id>[&fname<x>=<name in the zip>]");
  }
  if (byIndex.size > maxEntries) {
    throw new InvalidArgumentError('id0', `Invalid parameter 'id0': at most ${maxEntries} documents per batch (got ${byIndex.size})`, 'TOO_MANY_ENTRIES');
  }
  return [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, e]) => {
      if (!e.id) throw new InvalidArgumentError(`id${index}`, `Invalid parameter 'id${index}': required (conn${index} or fname${index} was given)`);
      if (!e.conn) throw new InvalidArgumentError(`conn${index}`, `Invalid parameter 'conn${index}': required with id${index}`);
      return { index, id: e.id, connId: e.conn, fileName: e.fname };
    });
}
