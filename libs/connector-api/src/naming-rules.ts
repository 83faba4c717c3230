import { unescape } from 'node:querystring';
/**
 * What names a connector's repository accepts, declared as data in one place per connector
 * (`ContentConnector.namingRules`), so that a copy job can tell before writing whether a source
 * name fits its target and make it fit (apps/api/src/jobs/target-names.ts). A connector without
 * rules accepts every name its createFile accepts, and says so by leaving the member out.
 */

/** How a length is counted: UTF-8 bytes, or characters as UTF-16 code units (JavaScript's `length`, what SharePoint counts). */
export type LengthUnit = 'bytes' | 'chars';

export interface LengthLimit {
  max: number;
  unit: LengthUnit;
}

export interface NamingRules {
  /** Characters no name may contain, each one code point. */
  forbiddenCharacters: string;
  /** C0 controls (U+0000–U+001F) and DEL are refused; with `c1`, U+0080–U+009F too. */
  controlCharacters?: 'allowed' | 'c0' | 'c0-c1';
  /** Characters a name may not start with. */
  forbiddenLeading?: string;
  /** Characters a name may not end with. */
  forbiddenTrailing?: string;
  /** No whitespace (as JavaScript's trim sees it) at either end of a name. */
  noEdgeWhitespace?: boolean;
  /** Whole names refused (compared case-insensitively), e.g. `.lock`, `desktop.ini`. */
  reservedNames?: readonly string[];
  /** Names refused with or without an extension (compared case-insensitively on the part before the first dot), e.g. Windows' `CON`, `COM1`. */
  reservedStems?: readonly string[];
  /** Substrings refused anywhere in a name (compared case-insensitively), e.g. SharePoint's `_vti_`. */
  forbiddenSubstrings?: readonly string[];
  /** The longest name (one path segment). */
  maxSegment?: LengthLimit;
  /** The longest path from the repository root (`/a/b/c.txt`, '/' separators included), as the gateway names it. */
  maxPath?: LengthLimit;
  /**
   * The repository checks a name's percent-decoded forms too (decoded again and again, leniently, as
   * node:querystring's unescape does: a stray `%` makes it read each character by its low byte, so
   * `｜` U+FF5C reads as `\`): each form must meet forbiddenCharacters and controlCharacters.
   */
  percentDecodedForms?: boolean;
  /** Two names that differ only in case are one name to this repository. */
  caseInsensitive?: boolean;
  /** Two names equal once both are in Unicode normalization form C (NFC vs NFD) are one name to this repository. */
  normalizationInsensitive?: boolean;
  /** Where the rules come from (a document, a measurement), for the README and error messages. */
  reference: string;
}

const C0 = /[\u0000-\u001f\u007f]/u;
const C0_C1 = /[\u0000-\u001f\u007f-\u009f]/u;
const EDGE_WHITESPACE = /^\s|\s$/u;

/** The length of `text` in `unit`. */
export function lengthIn(text: string, unit: LengthUnit): number {
  return unit === 'bytes' ? Buffer.byteLength(text, 'utf8') : text.length;
}

/** What the repository compares when it compares two names: equal keys are one name there. */
export function nameKey(name: string, rules: NamingRules | undefined): string {
  let key = name;
  if (rules?.normalizationInsensitive) key = key.normalize('NFC');
  if (rules?.caseInsensitive) key = key.toLowerCase();
  return key;
}

/** A rule set made ready for names checked one after another (a copy job checks every document's). */
interface CompiledRules {
  forbidden?: RegExp;
  control?: RegExp;
  reserved: Set<string>;
  stems: Set<string>;
  substrings: string[];
}

const compiledRules = new WeakMap<NamingRules, CompiledRules>();

function compiled(rules: NamingRules): CompiledRules {
  let c = compiledRules.get(rules);
  if (!c) {
    const chars = [...rules.forbiddenCharacters].map((ch) => ch.replace(/[\]\\^-]/g, '\\$&')).join('');
    c = {
      ...(chars ? { forbidden: new RegExp(`[${chars}]`, 'u') } : {}),
      ...(rules.controlCharacters === 'c0' ? { control: C0 } : rules.controlCharacters === 'c0-c1' ? { control: C0_C1 } : {}),
      reserved: new Set((rules.reservedNames ?? []).map((r) => r.toLowerCase())),
      stems: new Set((rules.reservedStems ?? []).map((r) => r.toLowerCase())),
      substrings: (rules.forbiddenSubstrings ?? []).map((r) => r.toLowerCase()),
    };
    compiledRules.set(rules, c);
  }
  return c;
}

/** The first and the last character of a non-empty name (a surrogate pair whole). */
function edges(name: string): [string, string] {
  const first = String.fromCodePoint(name.codePointAt(0)!);
  const lastUnit = name.charCodeAt(name.length - 1);
  const last = lastUnit >= 0xdc00 && lastUnit <= 0xdfff && name.length > 1 ? name.slice(-2) : name.slice(-1);
  return [first, last];
}

/** Why `name` breaks `rules` (one reason per broken rule), or [] when it fits. `.` and `..` are never names. */
export function nameViolations(name: string, rules: NamingRules): string[] {
  if (name === '' || name === '.' || name === '..') return [`'${name}' is not a name`];
  const c = compiled(rules);
  const problems: string[] = [];
  if (rules.percentDecodedForms && name.includes('%') && decodedFormsBreak(name, rules)) problems.push('reads, percent-decoded, as a name with a forbidden character');
  if (c.forbidden?.test(name)) {
    const forbidden = [...new Set([...name].filter((ch) => rules.forbiddenCharacters.includes(ch)))];
    problems.push(`contains ${forbidden.map((ch) => `'${ch}'`).join(' ')}`);
  }
  if (c.control?.test(name)) problems.push('contains a control character');
  const [first, last] = edges(name);
  if (rules.forbiddenLeading?.includes(first)) problems.push(`starts with '${first}'`);
  if (rules.forbiddenTrailing?.includes(last)) problems.push(`ends with '${last}'`);
  if (rules.noEdgeWhitespace && EDGE_WHITESPACE.test(name)) problems.push('starts or ends with whitespace');
  if (c.reserved.size > 0 || c.stems.size > 0 || c.substrings.length > 0) {
    const lower = name.toLowerCase();
    if (c.reserved.has(lower)) problems.push('is a reserved name');
    const dot = name.indexOf('.');
    if (c.stems.has(dot < 0 ? lower : lower.slice(0, dot))) problems.push(`'${dot < 0 ? name : name.slice(0, dot)}' is a reserved name`);
    const substring = c.substrings.find((sub) => lower.includes(sub));
    if (substring !== undefined) problems.push(`contains '${rules.forbiddenSubstrings!.find((sub) => sub.toLowerCase() === substring)}'`);
  }
  if (rules.maxSegment && lengthIn(name, rules.maxSegment.unit) > rules.maxSegment.max) problems.push(`is longer than ${rules.maxSegment.max} ${rules.maxSegment.unit}`);
  return problems;
}

/** Decodings past this many are refused as they are by the filesystem connector (paths.ts). */
const MAX_DECODE_ROUNDS = 3;

/** Whether a percent-decoded form of `name` (not `name` itself) has a forbidden character, a control, or is `.`/`..`. */
export function decodedFormsBreak(name: string, rules: NamingRules): boolean {
  let current = name;
  for (let round = 0; ; round++) {
    const next = unescape(current);
    if (next === current) return false;
    if (round === MAX_DECODE_ROUNDS) return true;
    if (next === '.' || next === '..' || [...next].some((c) => rules.forbiddenCharacters.includes(c)) || C0_C1.test(next)) return true;
    current = next;
  }
}

/** Why the path `folderPath/name` is too long for `rules`, or undefined. */
export function pathViolation(folderPath: string, name: string, rules: NamingRules): string | undefined {
  if (!rules.maxPath) return undefined;
  const full = folderPath === '/' ? `/${name}` : `${folderPath}/${name}`;
  return lengthIn(full, rules.maxPath.unit) > rules.maxPath.max ? `the path is longer than ${rules.maxPath.max} ${rules.maxPath.unit}` : undefined;
}

/** Windows' reserved device names (with or without an extension), which SharePoint and OneDrive refuse too. */
export const WINDOWS_RESERVED_STEMS: readonly string[] = [
  'CON', 'PRN', 'AUX', 'NUL',
  ...Array.from({ length: 10 }, (_, i) => `COM${i}`),
  ...Array.from({ length: 10 }, (_, i) => `LPT${i}`),
];

/** Characters Windows refuses in a name (besides controls). */
export const WINDOWS_FORBIDDEN_CHARACTERS = '"*:<>?/\\|';

/**
 * Names SharePoint Online and OneDrive accept (Microsoft, "Restrictions and limitations in OneDrive and
 * SharePoint": invalid characters, invalid file or folder names, 400-character decoded path), plus what
 * the SharePoint and Graph connectors refuse themselves before any call (`#` and `%`, which their URLs
 * cannot carry safely; a leading `~`; whitespace at either end: names.ts, drive-items.ts). Shared by the
 * SharePoint (REST) and Graph connectors, which write to the same libraries.
 */
export const MICROSOFT_365_NAMING_RULES: NamingRules = {
  forbiddenCharacters: `${WINDOWS_FORBIDDEN_CHARACTERS}#%`,
  controlCharacters: 'c0',
  forbiddenLeading: '~',
  forbiddenTrailing: '.',
  noEdgeWhitespace: true,
  reservedNames: ['.lock', 'desktop.ini', ...WINDOWS_RESERVED_STEMS],
  forbiddenSubstrings: ['_vti_'],
  maxSegment: { max: 255, unit: 'chars' },
  // Microsoft counts the decoded path from the site's host; the gateway path starts at the library, so a
  // library whose own URL is long leaves less: a write past the real limit fails as an error of the document.
  maxPath: { max: 400, unit: 'chars' },
  caseInsensitive: true,
  reference: 'Microsoft: Restrictions and limitations in OneDrive and SharePoint (invalid characters, invalid names, path length)',
};
