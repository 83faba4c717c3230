import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor, ContentConnector } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import type { DocOutcome } from '@gateway/persistence';
import { DocumentCopier, type CopyGuard } from './document-copier';
import { DEFAULT_PLAN_STEPS, DocumentPlanner, PLANNED_OUTCOME, PlanNotes, unmappedSummary, withPlan, type PlanSteps } from './document-planner';
import type { JobDefinition } from '../config/job-definition.dto';
import type { DocItem } from './task-plan';

const actor: Actor = { username: 'alice' };
/** Connector members that read content or change the target: a plan calls none of them. */
const FORBIDDEN = ['openContent', 'createFile', 'deleteItem', 'updateItem', 'moveItem', 'copyItem'];

/** Plans between two real filesystem connectors on temporary folders, the target's calls recorded. */
describe('DocumentPlanner', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;
  let calls: string[];

  /** The connector with every call of its own members and of its groups' recorded by name. */
  function recorded(connector: ContentConnector): ContentConnector {
    const wrap = <T extends object>(obj: T, prefix: string): T =>
      new Proxy(obj, {
        get(t, key, receiver) {
          const value = Reflect.get(t, key, receiver) as unknown;
          if (typeof key !== 'string') return value;
          if (typeof value === 'function') {
            return (...args: unknown[]) => {
              calls.push(`${prefix}${key}`);
              return (value as (...a: unknown[]) => unknown).apply(t, args);
            };
          }
          if (value !== null && typeof value === 'object' && ['folders', 'contentUpdate', 'directCopy', 'versioning'].includes(key)) return wrap(value, `${key}.`);
          return value;
        },
      });
    return wrap(connector, '');
  }

  beforeEach(async () => {
    calls = [];
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'planner-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  function definition(options: Partial<JobDefinition['options']> = {}): JobDefinition {
    return {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], ...options },
    };
  }

  const planner = (options: Partial<JobDefinition['options']> = {}, steps?: PlanSteps, on: ContentConnector = target) =>
    new DocumentPlanner(definition(options), recorded(source), recorded(on), steps);
  const guard = (cancelled = false): CopyGuard => ({ cancelled, track: (s: Readable) => s });
  const fresh = { fresh: true, claimedAt: Date.now() };

  async function put(connector: ContentConnector, folder: string, name: string, text: string): Promise<DocItem> {
    const folderId = await connector.folders!.createFolder(folder, actor);
    const id = await connector.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from(text)]) }, actor);
    const rel = path.posix.relative('/in', `${folder}/${name}`);
    return { id, rel, path: `${folder}/${name}`, mimeType: 'text/plain', size: text.length };
  }

  /** Every file below the connector's root with its content: the target's whole state. */
  async function tree(id: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const root = path.join(dir, id);
    for (const entry of await fsp.readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
      const full = path.join(entry.parentPath, entry.name);
      out[path.relative(root, full)] = entry.isFile() ? await fsp.readFile(full, 'utf8') : '<dir>';
    }
    return out;
  }

  const forbidden = () => calls.filter((c) => FORBIDDEN.includes(c.split('.').pop()!) || c.startsWith('folders.') || c.startsWith('contentUpdate.') || c.startsWith('directCopy.'));

  it('plans create for a document whose target folder does not exist, without looking documents up in it or touching the target', async () => {
    const a = await put(source, '/in/sub', 'a.txt', 'alpha');
    const before = await tree('dst');
    const outcome = await planner().copy(a, fresh, false, guard());
    expect(outcome).toEqual({ docId: a.id, outcome: 'p', sourcePath: '/in/sub/a.txt', message: 'as /out/sub/a.txt', plan: 'create' });
    expect(await tree('dst')).toEqual(before);
    expect(forbidden()).toEqual([]);
    // The folder looked up once (/out/sub: its parent answered not found), never the document.
    expect(calls.filter((c) => c === 'idByPath')).toHaveLength(1);
  });

  it('plans each onExisting choice for a document that exists, with the target id, and writes nothing', async () => {
    const a = await put(source, '/in', 'a.txt', 'alpha');
    await put(target, '/out', 'a.txt', 'old');
    const existing = await target.idByPath('/out', 'a.txt');
    const before = await tree('dst');
    expect(await planner().copy(a, fresh, false, guard())).toMatchObject({ outcome: 'd', plan: 'skip', targetId: existing, message: 'Already exists at the target' });
    expect(await planner({ onExisting: 'overwrite' }).copy(a, fresh, false, guard())).toMatchObject({ outcome: 'p', plan: 'overwrite', targetId: existing });
    const versioned = await planner({ onExisting: 'version' }).copy(a, fresh, false, guard());
    expect(versioned).toMatchObject({ outcome: target.contentUpdate ? 'p' : 'e', plan: target.contentUpdate ? 'version' : 'fail' });
    // A target that cannot add versions fails the document, as the copy would.
    const noVersions = Object.assign(Object.create(target) as ContentConnector, { contentUpdate: undefined });
    expect(await planner({ onExisting: 'version' }, undefined, noVersions).copy(a, fresh, false, guard())).toMatchObject({ outcome: 'e', plan: 'fail' });
    expect(await tree('dst')).toEqual(before);
    expect(forbidden()).toEqual([]);
  });

  it('plans skip for a document the filters leave, with their reason', async () => {
    const a = await put(source, '/in', 'a.tmp', 'alpha');
    expect(await planner({ exclude: ['*.tmp'] }).copy(a, fresh, false, guard())).toMatchObject({ outcome: 's', plan: 'skip', message: 'Excluded by pattern ^.*\\.tmp$' });
    expect(calls).toEqual([]);
  });

  it('plans rename with the target name a name step gives, and fail with the reason of a refused name', async () => {
    const a = await put(source, '/in', 'a:b.txt', 'alpha');
    const sanitizing: PlanSteps = { ...DEFAULT_PLAN_STEPS, targetName: (n) => ({ name: n.replace(':', '_') }) };
    expect(await planner({}, sanitizing).copy(a, fresh, false, guard())).toMatchObject({ outcome: 'p', plan: 'rename', message: "as /out/a_b.txt (renamed from 'a:b.txt')" });
    const refusing: PlanSteps = { ...DEFAULT_PLAN_STEPS, targetName: (n) => ({ refused: `NAME_REFUSED: '${n}' has ':' (names: refuse)` }) };
    expect(await planner({}, refusing).copy(a, fresh, false, guard())).toMatchObject({ outcome: 'e', plan: 'fail', message: "NAME_REFUSED: 'a:b.txt' has ':' (names: refuse)" });
  });

  it('notes what the mapping step could not map on the document (once a name), and fails it when the step says so', async () => {
    const a = await put(source, '/in', 'a.txt', 'alpha');
    const b = await put(source, '/in', 'b.txt', 'beta');
    const noting: PlanSteps = {
      ...DEFAULT_PLAN_STEPS,
      map: (item, notes) => {
        notes.unmapped('property', 'cm:title');
        notes.unmapped('property', 'cm:title');
        if (item.path?.endsWith('b.txt')) {
          notes.unmapped('principal', 'GROUP_x');
          return "UNMAPPED: principal 'GROUP_x' (aclMapping.unmapped: fail)";
        }
        return undefined;
      },
    };
    const p = planner({}, noting);
    expect(await p.copy(a, fresh, false, guard())).toMatchObject({
      outcome: 'p',
      plan: 'create',
      message: 'as /out/a.txt; unmapped property cm:title',
      unmapped: [{ kind: 'property', name: 'cm:title' }],
    });
    expect(await p.copy(b, fresh, false, guard())).toMatchObject({
      outcome: 'e',
      plan: 'fail',
      message: "UNMAPPED: principal 'GROUP_x' (aclMapping.unmapped: fail); unmapped property cm:title, principal GROUP_x",
      unmapped: [
        { kind: 'property', name: 'cm:title' },
        { kind: 'principal', name: 'GROUP_x' },
      ],
    });
    // Nothing noted: no list on the outcome.
    expect(await planner().copy(a, fresh, false, guard())).not.toHaveProperty('unmapped');
  });

  it('fetches a run-errors document by id as the copy does, and plans fail when the source has it no more', async () => {
    const a = await put(source, '/in', 'a.txt', 'alpha');
    expect(await planner().copy({ id: a.id, rel: 'a.txt' }, fresh, true, guard())).toMatchObject({ outcome: 'p', plan: 'create' });
    await source.deleteItem(a.id, true, actor);
    const gone = await planner().copy({ id: a.id, rel: 'a.txt' }, fresh, true, guard());
    expect(gone).toMatchObject({ outcome: 'e', plan: 'fail' });
    expect(gone?.message).toMatch(/NOT_FOUND: /);
  });

  it('answers nothing for a document of a run cut meanwhile (it stays claimed)', async () => {
    const a = await put(source, '/in', 'a.txt', 'alpha');
    expect(await planner().copy(a, fresh, false, guard(true))).toBeUndefined();
  });

  it("plans, document for document, the outcome the copy then records", async () => {
    const docs = [await put(source, '/in', 'new.txt', 'n'), await put(source, '/in', 'old.txt', 'o'), await put(source, '/in/deep', 'x.tmp', 'x')];
    await put(target, '/out', 'old.txt', 'previous');
    for (const onExisting of ['skip', 'overwrite', 'version'] as const) {
      const options = { onExisting, exclude: ['*.tmp'] };
      const plans: DocOutcome[] = [];
      for (const d of docs) plans.push((await planner(options).copy(d, fresh, false, guard()))!);
      const copier = new DocumentCopier(definition(options), source, target, actor);
      for (const [i, d] of docs.entries()) {
        const real = (await copier.copy(d, fresh, false, guard()))!;
        expect([d.rel, onExisting, plans[i].outcome]).toEqual([d.rel, onExisting, real.outcome]);
        if (plans[i].plan !== 'skip') expect(PLANNED_OUTCOME[plans[i].plan as keyof typeof PLANNED_OUTCOME]).toBe(real.outcome);
      }
      // The next pass finds what this one wrote.
      await fsp.rm(path.join(dir, 'dst', 'out', 'new.txt'));
    }
  });

  it('gives an outcome without a plan the one its code says (an indexing dry run)', () => {
    const base = { docId: 'x', sourcePath: '/in/x' };
    expect(withPlan({ ...base, outcome: 's' }).plan).toBe('skip');
    expect(withPlan({ ...base, outcome: 'e' }).plan).toBe('fail');
    expect(withPlan({ ...base, outcome: 'p', plan: 'overwrite' }).plan).toBe('overwrite');
    const notes = new PlanNotes();
    notes.unmapped('type', 'cm:content');
    notes.unmapped('type', 'cm:content');
    expect(notes.list()).toEqual([{ kind: 'type', name: 'cm:content' }]);
    expect(unmappedSummary([])).toEqual({ property: {}, type: {}, principal: {}, permission: {} });
    expect(unmappedSummary([{ kind: 'type', name: 'cm:content', documents: 2 }, { kind: 'principal', name: 'bob', documents: 1 }])).toEqual({
      property: {},
      type: { 'cm:content': 2 },
      principal: { bob: 1 },
      permission: {},
    });
  });
});
