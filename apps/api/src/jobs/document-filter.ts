import * as path from 'node:path/posix';
import type { JobDefinition } from '../config/job-definition.dto';
import type { DocItem } from './task-plan';

/** A name pattern of the job's options: * any run of characters, ? one character, the rest literal. */
export function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/**
 * Which listed documents a job leaves alone (recorded skipped `s`, with the reason): `exclude` and `include`
 * name patterns, `minSize`/`maxSize` (bytes) and `modifiedAfter`/`modifiedBefore` (ISO 8601) of the options.
 * Size and time are the listing's; a document the listing gave neither passes those two tests (a run-errors
 * run re-runs documents that passed them already).
 */
export class DocumentFilter {
  private readonly exclude: RegExp[];
  private readonly include: RegExp[];
  private readonly after?: number;
  private readonly before?: number;

  constructor(private readonly options: JobDefinition['options']) {
    this.exclude = options.exclude.map(globToRegExp);
    this.include = (options.include ?? []).map(globToRegExp);
    if (options.modifiedAfter !== undefined) this.after = Date.parse(options.modifiedAfter);
    if (options.modifiedBefore !== undefined) this.before = Date.parse(options.modifiedBefore);
  }

  /** Why the document is skipped, or undefined when the job takes it. */
  skipReason(item: Pick<DocItem, 'rel' | 'size' | 'modified' | 'unaddressable'>): string | undefined {
    if (item.unaddressable !== undefined) return `UNADDRESSABLE: ${item.unaddressable}`;
    const name = path.basename(item.rel);
    const excluded = this.exclude.find((r) => r.test(name));
    if (excluded) return `Excluded by pattern ${excluded.source}`;
    if (this.include.length > 0 && !this.include.some((r) => r.test(name))) return `Not matched by the include patterns ${this.options.include!.join(', ')}`;
    const { minSize, maxSize, modifiedAfter, modifiedBefore } = this.options;
    if (item.size !== undefined) {
      if (minSize !== undefined && item.size < minSize) return `Size ${item.size} bytes is below minSize ${minSize}`;
      if (maxSize !== undefined && item.size > maxSize) return `Size ${item.size} bytes is above maxSize ${maxSize}`;
    }
    if (item.modified !== undefined) {
      if (this.after !== undefined && item.modified <= this.after) return `Modified ${new Date(item.modified).toISOString()}, not after modifiedAfter ${modifiedAfter}`;
      if (this.before !== undefined && item.modified >= this.before) return `Modified ${new Date(item.modified).toISOString()}, not before modifiedBefore ${modifiedBefore}`;
    }
    return undefined;
  }
}
