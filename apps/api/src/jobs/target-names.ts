import { createHash } from 'node:crypto';
import type { NamesMode } from '../config/job-definition.dto';
import { decodedFormsBreak, GatewayError, lengthIn, nameKey, nameViolations, NotFoundError, pathViolation, type Actor, type ContentConnector, type NamingRules } from '@gateway/connector-api';

/**
 * The names a copy job gives its documents at the target (job option `names`, README "Names the
 * target accepts"): the source's own name where the target's naming rules take it; otherwise, with
 * `sanitize`, a name made to fit by a fixed table, and with `refuse`, an error of the document. A
 * short hash of the source name is added only where two different source names would land on one
 * target name (a case-insensitive target, a sanitized name equal to another source's name).
 */

export { NAMES_MODES, type NamesMode } from '../config/job-definition.dto';

/** The property a renamed document keeps its source name in, where the target has properties; a copy back restores it. */
export const SOURCE_NAME_PROPERTY = 'source_name';

/** Hex digits of the SHA-256 of the source name added to a target name: 32 bits, so two given names collide once in 4 billion. */
const HASH_DIGITS = 8;
/** An extension longer than this is part of the stem when a name is cut. */
const MAX_EXTENSION_CHARS = 16;
/** What sanitizing writes for a leading or trailing whitespace character (a space cannot be an edge anywhere Microsoft stores names). */
const EDGE_SPACE = '\u2423'; // ␣ OPEN BOX
/** What sanitizing writes for a C1 control, which has no picture of its own. */
const C1_REPLACEMENT = '\ufffd';

/** A name the job's `names: refuse` keeps from the target, or that no sanitizing can place (its folder's path is too long). */
export class NameRefused extends Error {}

/** The full-width look-alike of a printable ASCII character (`:` → `：` U+FF1A); `_` for any other. */
export function lookAlike(c: string): string {
  const code = c.codePointAt(0)!;
  return code >= 0x21 && code <= 0x7e ? String.fromCodePoint(code + 0xfee0) : '_';
}

/** A control character's visible stand-in: C0 and DEL their Control Pictures (U+2400–U+2421), C1 U+FFFD. */
function controlPicture(c: string): string {
  const code = c.codePointAt(0)!;
  if (code <= 0x1f) return String.fromCodePoint(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return C1_REPLACEMENT;
}

function isControl(c: string, rules: NamingRules): boolean {
  const code = c.codePointAt(0)!;
  if (rules.controlCharacters === undefined || rules.controlCharacters === 'allowed') return false;
  if (code <= 0x1f || code === 0x7f) return true;
  return rules.controlCharacters === 'c0-c1' && code >= 0x80 && code <= 0x9f;
}

/** The stand-in of an edge character a rule refuses: a dot its full-width form, whitespace ␣, anything else its look-alike. */
function edgeStandIn(c: string): string {
  return /\s/u.test(c) ? EDGE_SPACE : lookAlike(c);
}

export function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_DIGITS);
}

/** `name` split before its extension (the last dot, when not the first character and the extension is short). */
function splitExtension(name: string): [string, string] {
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || name.length - dot > MAX_EXTENSION_CHARS) return [name, ''];
  return [name.slice(0, dot), name.slice(dot)];
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The longest start of `text` whose length in `unit` is at most `max`, cut between graphemes (never inside an emoji or a surrogate pair). */
function cutTo(text: string, max: number, unit: 'bytes' | 'chars'): string {
  let kept = '';
  for (const { segment } of graphemes.segment(text)) {
    if (lengthIn(kept + segment, unit) > max) break;
    kept += segment;
  }
  return kept;
}

/** Whether `folderPath/name` fits both length limits of `rules`. */
function fits(folderPath: string, name: string, rules: NamingRules): boolean {
  if (rules.maxSegment && lengthIn(name, rules.maxSegment.unit) > rules.maxSegment.max) return false;
  return pathViolation(folderPath, name, rules) === undefined;
}

/**
 * `stem + ~hash + extension`, the stem cut (between graphemes) until the name fits both limits of
 * `rules` in `folderPath`. The hash is that of `hashed` (the source name), so the result is the same
 * on every run and differs for two source names that share a long start.
 */
export function withHash(name: string, hashed: string, folderPath: string, rules: NamingRules | undefined): string {
  const [stem, extension] = splitExtension(name);
  const suffix = `~${shortHash(hashed)}${extension}`;
  if (!rules || fits(folderPath, stem + suffix, rules)) return stem + suffix;
  // Binary search on the stem's kept length would save little: names are at most a few hundred graphemes.
  for (let keep = stem.length - 1; keep >= 1; keep--) {
    const candidate = cutTo(stem, keep, 'chars') + suffix;
    if (fits(folderPath, candidate, rules)) return candidate;
  }
  throw new NameRefused(`the target folder '${folderPath}' leaves no room for a name`);
}

/**
 * `name` made to fit `rules`, by the table of the jobs README: each forbidden character its
 * full-width look-alike, each control its picture, a refused first or last character its stand-in,
 * a forbidden substring its last character full-width, a reserved name a `_` after it (after its
 * stem for a reserved stem), and a name too long (alone or in `folderPath`) cut, with a hash of
 * the source name. The same name always gives the same result.
 */
export function sanitizeName(name: string, folderPath: string, rules: NamingRules): string {
  if (name === '.' || name === '..') name = name.replace(/\./g, lookAlike('.'));
  // A repository that reads names percent-decoded too reads none once no '%' is left.
  const decodes = rules.percentDecodedForms && decodedFormsBreak(name, rules);
  let chars = [...name].map((c) => (decodes && c === '%' ? lookAlike(c) : c)).map((c) => (rules.forbiddenCharacters.includes(c) ? lookAlike(c) : isControl(c, rules) ? controlPicture(c) : c));
  const leadingRefused = (c: string) => !!rules.forbiddenLeading?.includes(c) || (!!rules.noEdgeWhitespace && /\s/u.test(c));
  const trailingRefused = (c: string) => !!rules.forbiddenTrailing?.includes(c) || (!!rules.noEdgeWhitespace && /\s/u.test(c));
  if (leadingRefused(chars[0])) chars = [edgeStandIn(chars[0]), ...chars.slice(1)];
  if (trailingRefused(chars.at(-1)!)) chars = [...chars.slice(0, -1), edgeStandIn(chars.at(-1)!)];
  let result = chars.join('');
  for (const substring of rules.forbiddenSubstrings ?? []) {
    const last = substring.at(-1)!;
    const pattern = new RegExp(escapeRegExp(substring), 'giu');
    result = result.replace(pattern, (found) => found.slice(0, -1) + lookAlike(last));
  }
  const lower = result.toLowerCase();
  if (rules.reservedNames?.some((r) => r.toLowerCase() === lower)) result += '_';
  const dot = result.indexOf('.');
  const stem = dot < 0 ? result : result.slice(0, dot);
  if (rules.reservedStems?.some((r) => r.toLowerCase() === stem.toLowerCase())) result = `${stem}_${result.slice(stem.length)}`;
  if (!fits(folderPath, result, rules)) result = withHash(result, name, folderPath, rules);
  const left = nameViolations(result, rules);
  // Every rule is met above; a rule kind added to NamingRules without a sanitizing step lands here.
  if (left.length > 0) throw new NameRefused(`'${name}' cannot be made a valid name (${left.join('; ')})`);
  return result;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Why `name` cannot be written as it is into `folderPath` under `rules`, or [] when it can. */
export function nameProblems(name: string, folderPath: string, rules: NamingRules | undefined): string[] {
  if (!rules) return [];
  const path = pathViolation(folderPath, name, rules);
  return [...nameViolations(name, rules), ...(path ? [path] : [])];
}

/** Where a document goes: its target name, and the target item already there from the same source, if any. */
export interface Placement {
  name: string;
  existing?: string;
}

/**
 * The target names of one run in one process: the rules of the target, the job's mode, and which
 * source name each target name (as the target compares names) was given to, so that a second
 * source landing on one target name gets the hashed name instead of the first one's document.
 */
export class TargetNames {
  private readonly claimed = new Map<string, string>();
  /** Target folders by source folder: one sanitizing per folder, not per document. */
  private readonly folders = new Map<string, string>();
  /** Whether the target takes two different names for one (case, Unicode normalization). */
  private readonly folds: boolean;

  constructor(
    private readonly rules: NamingRules | undefined,
    private readonly mode: NamesMode,
  ) {
    this.folds = !!rules?.caseInsensitive || !!rules?.normalizationInsensitive;
  }

  /** The target folder of a source folder `relDir` ('.' for the job's folder) below `targetFolder`, each segment made to fit. */
  folder(targetFolder: string, relDir: string): string {
    if (relDir === '.' || relDir === '') return targetFolder;
    const key = `${targetFolder}\n${relDir}`;
    let folder = this.folders.get(key);
    if (folder === undefined) {
      folder = targetFolder;
      for (const segment of relDir.split('/')) folder = joinPath(folder, this.fitted(folder, segment));
      this.folders.set(key, folder);
    }
    return folder;
  }

  /** The target name of source name `sourceName` in `folderPath`: fitted, and hashed when another source of this run holds that name. */
  name(folderPath: string, sourceName: string): string {
    const fitted = this.fitted(folderPath, sourceName);
    const key = nameKey(joinPath(folderPath, fitted), this.rules);
    const holder = this.claimed.get(key);
    if (holder === undefined || holder === sourceName) {
      // A name kept as it is on a target that compares names exactly meets another source only at a
      // sanitized name, which is remembered: a filesystem-to-filesystem job remembers nothing.
      if (fitted !== sourceName || this.folds) this.claimed.set(key, sourceName);
      return fitted;
    }
    return this.collided(folderPath, sourceName, fitted);
  }

  /**
   * Where the document of `sourceName` goes when the target has an item at `name`: there (that item
   * is this source's copy: its `source_name` property, or its own name, is `sourceName`), or at the
   * hashed name, with the item already at that one if it is this source's.
   */
  async place(target: ContentConnector, folderPath: string, name: string, sourceName: string): Promise<Placement> {
    const existing = await findItem(target, folderPath, name);
    if (existing === undefined || existing.origin === sourceName) return { name, ...(existing ? { existing: existing.id } : {}) };
    const hashed = this.collided(folderPath, sourceName, name);
    const atHashed = await findItem(target, folderPath, hashed);
    // An item at the hashed name without a source_name (a target that cannot keep it) carries this source's hash in its name: ours.
    if (atHashed !== undefined && atHashed.keptSourceName && atHashed.origin !== sourceName) {
      throw new NameRefused(`'${hashed}' is taken at the target by another document ('${atHashed.origin}')`);
    }
    return { name: hashed, ...(atHashed ? { existing: atHashed.id } : {}) };
  }

  private collided(folderPath: string, sourceName: string, taken: string): string {
    if (this.mode === 'refuse') throw new NameRefused(`another source document has the target name '${taken}'`);
    const previous = nameKey(joinPath(folderPath, taken), this.rules);
    if (this.claimed.get(previous) === sourceName) this.claimed.delete(previous);
    const hashed = withHash(this.fitted(folderPath, sourceName), sourceName, folderPath, this.rules);
    this.claimed.set(nameKey(joinPath(folderPath, hashed), this.rules), sourceName);
    return hashed;
  }

  /** `name` as the target takes it: unchanged, sanitized, or refused (mode `refuse`). */
  private fitted(folderPath: string, name: string): string {
    const problems = nameProblems(name, folderPath, this.rules);
    if (problems.length === 0) return name;
    if (this.mode === 'refuse') throw new NameRefused(`the target refuses the name '${name}' (${problems.join('; ')})`);
    return sanitizeName(name, folderPath, this.rules!);
  }
}

/** The target item at `folderPath/name` and the source name it was copied from (its `source_name`, else its own name). */
async function findItem(target: ContentConnector, folderPath: string, name: string): Promise<{ id: string; origin: string; keptSourceName: boolean } | undefined> {
  try {
    const id = await target.idByPath(folderPath, name);
    const item = await target.getItem(id);
    const kept = item.properties?.[SOURCE_NAME_PROPERTY] ?? undefined;
    return { id, origin: kept ?? item.name, keptSourceName: kept !== undefined };
  } catch (e) {
    if (e instanceof NotFoundError) return undefined;
    throw e;
  }
}

function joinPath(folder: string, name: string): string {
  return folder === '/' ? `/${name}` : `${folder}/${name}`;
}

/** A written document's names: where it came from and where it went. `renamed`: the target name is not the listed source name. */
export interface TargetNaming {
  sourceName: string;
  targetPath: string;
  renamed: boolean;
}

/**
 * The name a document is copied under: the `source_name` its listing carries (a copy back of a
 * document this gateway renamed), else its listed name.
 */
export function sourceNameOf(item: { rel: string; sourceName?: string }): string {
  return item.sourceName ?? item.rel.slice(item.rel.lastIndexOf('/') + 1);
}

/**
 * For a renamed document: the outcome's note (source path → target path) and, where the target
 * name is not the source name and the target has properties, the source name kept as `source_name`.
 * A target that cannot keep it (no properties, no such column) is named in the note: the copy stands.
 */
export async function renameNote(target: ContentConnector, targetId: string, naming: TargetNaming, sourcePath: string, actor: Actor): Promise<string | undefined> {
  if (!naming.renamed) return undefined;
  const note = `renamed: ${sourcePath} → ${naming.targetPath}`;
  const targetName = naming.targetPath.slice(naming.targetPath.lastIndexOf('/') + 1);
  if (targetName === naming.sourceName) return note;
  if (!target.propertyUpdate) return `${note}; the target keeps no properties, so a copy back cannot restore the name`;
  try {
    await target.propertyUpdate.updateProperties(targetId, { [SOURCE_NAME_PROPERTY]: naming.sourceName }, actor);
    return note;
  } catch (e) {
    return `${note}; ${SOURCE_NAME_PROPERTY} not kept (${e instanceof GatewayError ? `${e.code}: ${e.message}` : String(e)})`;
  }
}
