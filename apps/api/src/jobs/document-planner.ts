import * as path from 'node:path/posix';
import { type ContentConnector, type ItemInfo } from '@gateway/connector-api';
import type { ClaimedDoc, DocOutcome } from '@gateway/persistence';
import type { JobDefinition } from '../config/job-definition.dto';
import { errorMessage, findId, joinPath, type CopyGuard } from './document-copier';
import { NameRefused, sourceNameOf } from './target-names';
import { DocumentFilter } from './document-filter';
import type { DocItem } from './task-plan';

/** What a real run would do with one document (a dry run's `plan`, recorded with its outcome: DocOutcome.plan). */
export type PlanAction = 'create' | 'skip' | 'overwrite' | 'version' | 'rename' | 'fail';
export const PLAN_ACTIONS: readonly PlanAction[] = ['create', 'skip', 'overwrite', 'version', 'rename', 'fail'];

/** The outcome code a real run records for each planned action (skip: `d` when the document exists, `s` when it is excluded or unchanged). */
export const PLANNED_OUTCOME: Record<Exclude<PlanAction, 'skip'>, DocOutcome['outcome']> = { create: 'p', overwrite: 'p', version: 'p', rename: 'p', fail: 'e' };

/** What a property, type or permission mapping could not map (issue 34 §1–2 report them through PlanNotes). */
export type UnmappedKind = 'property' | 'type' | 'principal' | 'permission';

export const UNMAPPED_KINDS: readonly UnmappedKind[] = ['property', 'type', 'principal', 'permission'];

/**
 * What the mapping steps noted while one document was planned: the distinct names they could not map. The
 * planner hands one to each step (`PlanSteps.map`); the document's outcome carries them (DocOutcome.unmapped:
 * counted per run in job_run_unmapped, the report's `unmapped` summary) and its message ends with them
 * (`unmapped property cm:title`). The property and type mapping (MappedProperties.note) and the permission
 * mapping (AclCarrier.note) call it, through plan-steps.ts.
 */
export class PlanNotes {
  private readonly noted = new Map<string, { kind: UnmappedKind; name: string }>();

  unmapped(kind: UnmappedKind, name: string): void {
    this.noted.set(`${kind} ${name}`, { kind, name });
  }

  /** The distinct names noted, in the order first noted. */
  list(): Array<{ kind: UnmappedKind; name: string }> {
    return [...this.noted.values()];
  }
}

/** The report's summary of a run's unmapped names: documents per name, by kind (every kind present). */
export function unmappedSummary(counts: ReadonlyArray<{ kind: string; name: string; documents: number }>): Record<UnmappedKind, Record<string, number>> {
  const out: Record<UnmappedKind, Record<string, number>> = { property: {}, type: {}, principal: {}, permission: {} };
  for (const c of counts) if ((UNMAPPED_KINDS as readonly string[]).includes(c.kind)) out[c.kind as UnmappedKind][c.name] = c.documents;
  return out;
}

/**
 * The steps of a copy that may change or refuse a document before it is written, as the plan asks them
 * (plan-steps.ts builds them from the job's options with the copier's own classes): the target-safe names
 * (TargetNames) give `targetDir` and `targetName`, the property and permission mappings give `map`.
 * DEFAULT_PLAN_STEPS keeps every name and maps nothing.
 */
export interface PlanSteps {
  /** The target folder of source folder `relDir` ('.' for the job's folder) below `targetFolder`; absent: the same path. */
  targetDir?(targetFolder: string, relDir: string): string;
  /** The name the document gets in `targetDir`: `{ name }` (a rename when it differs), or `{ refused }` (names: refuse). */
  targetName(sourceName: string, item: ItemInfo | DocItem, targetDir: string): { name: string } | { refused: string };
  /**
   * Maps the document's properties, type and permissions, noting what it cannot; a reason when the document
   * fails (unmapped: fail), or a GatewayError thrown (recorded as the copier records it: `CODE: message`).
   */
  map(item: ItemInfo | DocItem, notes: PlanNotes): Promise<string | undefined> | string | undefined;
  /** What the steps need once per run (mapping files read); a rejection fails the run, as the copier's does. */
  ready?(): Promise<unknown>;
}

export const DEFAULT_PLAN_STEPS: PlanSteps = {
  targetName: (sourceName) => ({ name: sourceName }),
  map: () => undefined,
};

/**
 * A dry run's document decisions (issue 34 §3): for each document, what the copy of a real run would do with it,
 * from the same options as DocumentCopier (filters, onExisting, the target's capabilities), answered as the
 * outcome a real run would record with the action in `plan`. It reads no content and writes nothing: the only
 * calls are getItem of the source (run-errors documents, as the copier fetches them) and idByPath of the target
 * (folders and documents). The executor takes it in the copier's place (same `copy` signature).
 */
export class DocumentPlanner {
  /** Per target folder: its id, or undefined when it does not exist (every document in it is then new). */
  private readonly folders = new Map<string, Promise<string | undefined>>();
  private readonly filter: DocumentFilter;

  constructor(
    readonly def: JobDefinition,
    readonly source: ContentConnector,
    private readonly target: ContentConnector,
    private readonly steps: PlanSteps = DEFAULT_PLAN_STEPS,
  ) {
    this.filter = new DocumentFilter(def.options);
  }

  sourcePath(item: DocItem): string {
    return item.path ?? joinPath(this.def.source.folderPath, item.rel);
  }

  /** One document's plan as its outcome; undefined when the run was cut meanwhile (it stays claimed and is planned again). */
  async copy(item: DocItem, _claim: Pick<ClaimedDoc, 'fresh' | 'claimedAt'>, fetch: boolean, guard: CopyGuard): Promise<DocOutcome | undefined> {
    const sourcePath = this.sourcePath(item);
    const skip = this.filter.skipReason(item);
    if (skip) return { docId: item.id, outcome: 's', sourcePath, message: skip, plan: 'skip' };
    if (guard.cancelled) return undefined;
    await this.steps.ready?.();
    const notes = new PlanNotes();
    const outcome = await this.decide(item, sourcePath, fetch, notes).catch((e: unknown): DocOutcome => {
      const message = e instanceof NameRefused ? `NAME_REFUSED: ${e.message}` : errorMessage(e);
      return { docId: item.id, outcome: 'e', sourcePath, message, plan: 'fail' };
    });
    if (guard.cancelled) return undefined;
    const unmapped = notes.list();
    if (unmapped.length > 0) {
      const noted = `unmapped ${unmapped.map((u) => `${u.kind} ${u.name}`).join(', ')}`;
      outcome.message = outcome.message ? `${outcome.message}; ${noted}` : noted;
      outcome.unmapped = unmapped;
    }
    return outcome;
  }

  private async decide(item: DocItem, sourcePath: string, fetch: boolean, notes: PlanNotes): Promise<DocOutcome> {
    const info: ItemInfo | DocItem = fetch ? await this.source.getItem(item.id) : item;
    const fail = (message: string): DocOutcome => ({ docId: item.id, outcome: 'e', sourcePath, message, plan: 'fail' });
    const sourceName = sourceNameOf(item);
    const relDir = path.dirname(item.rel);
    const targetFolder = this.def.target.folderPath ?? '/';
    const targetDir = this.steps.targetDir ? this.steps.targetDir(targetFolder, relDir) : relDir === '.' ? targetFolder : joinPath(targetFolder, relDir);
    const named = this.steps.targetName(sourceName, info, targetDir);
    if ('refused' in named) return fail(named.refused);
    const refused = await this.steps.map(info, notes);
    if (refused !== undefined) return fail(refused);
    const targetPath = joinPath(targetDir, named.name);
    const folderId = await this.folderId(targetDir);
    // A real run makes a missing folder through the target's folders group; without one it fails to find it.
    if (folderId === undefined && !this.target.folders) return fail(`NOT_FOUND: target folder ${targetDir} does not exist and connector ${this.target.id} cannot create folders`);
    const existing = folderId === undefined ? undefined : await findId(this.target, targetDir, named.name);
    if (existing === undefined) {
      if (named.name !== path.basename(item.rel)) return { docId: item.id, outcome: 'p', sourcePath, message: `as ${targetPath} (renamed from '${sourceName}')`, plan: 'rename' };
      return { docId: item.id, outcome: 'p', sourcePath, message: `as ${targetPath}`, plan: 'create' };
    }
    const exists = { docId: item.id, sourcePath, targetId: existing };
    switch (this.def.options.onExisting) {
      case 'overwrite':
        return { ...exists, outcome: 'p', message: `overwritten: ${targetPath}`, plan: 'overwrite' };
      case 'version':
        if (!this.target.contentUpdate) return { ...exists, outcome: 'e', message: `${targetPath} exists and connector ${this.target.id} cannot add a version to it`, plan: 'fail' };
        return { ...exists, outcome: 'p', message: `new version: ${targetPath}`, plan: 'version' };
      default:
        return { ...exists, outcome: 'd', message: 'Already exists at the target', plan: 'skip' };
    }
  }

  /** The target folder's id, looked up once per run and process; undefined when it does not exist (a real run would make it). */
  private folderId(folderPath: string): Promise<string | undefined> {
    let p = this.folders.get(folderPath);
    if (!p) {
      p = lookUpFolder(this.target, folderPath);
      p.catch(() => this.folders.delete(folderPath));
      this.folders.set(folderPath, p);
    }
    return p;
  }
}

/** The plan of an outcome the planning step left without one (an indexing dry run's skips and failures). */
export function withPlan(outcome: DocOutcome): DocOutcome {
  if (outcome.plan === undefined) outcome.plan = outcome.outcome === 'e' ? 'fail' : outcome.outcome === 'p' ? 'create' : 'skip';
  return outcome;
}

async function lookUpFolder(connector: ContentConnector, folderPath: string): Promise<string | undefined> {
  if (folderPath === '/' || folderPath === '') return (await connector.rootFolder()).folderId;
  return findId(connector, path.dirname(folderPath), path.basename(folderPath));
}
