import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { NotFoundError, type Actor, type ContentConnector, type PropertyUpdateCapability } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import type { JobDefinition } from '../../config/job-definition.dto';
import type { PropertyMapping } from '../../config/property-mapping.dto';
import { DocumentCopier, type CopyGuard } from '../document-copier';
import { PlanNotes } from '../document-planner';
import { planSteps } from '../plan-steps';

const actor: Actor = { username: 'alice' };

/**
 * The mapped properties in the create call itself (the target's propertyUpdate.propertiesOnCreate), and the
 * source documents read together (getItems), between real filesystem connectors.
 */
describe('DocumentCopier: mapped properties carried by the create call, source documents read together', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'mapping-create-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await source.close?.();
    await target.close?.();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const guard: CopyGuard = { cancelled: false, track: (s: Readable) => s };
  const fresh = { fresh: true, claimedAt: Date.now() };

  function definition(mapping: PropertyMapping): JobDefinition {
    return {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], mapping },
    };
  }

  async function put(name: string, properties: Record<string, string>): Promise<string> {
    const folderId = await source.folders!.createFolder('/in', actor);
    const id = await source.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from('alpha')]) }, actor);
    await source.propertyUpdate!.updateProperties(id, properties, actor);
    return id;
  }

  /** The target with its updateProperties counted (and the propertiesOnCreate it declares, or not). */
  function counting(declares: boolean): { to: ContentConnector; updates: jest.Mock } {
    const updates = jest.fn((id: string, props: Record<string, string>, a: Actor) => target.propertyUpdate!.updateProperties(id, props, a));
    const propertyUpdate: PropertyUpdateCapability = { updateProperties: updates, ...(declares ? { propertiesOnCreate: true } : {}) };
    return { to: Object.assign(Object.create(target) as ContentConnector, { propertyUpdate }), updates };
  }

  const mapping: PropertyMapping = { properties: { title: { to: 'Title', transform: 'trim' } }, constants: { Wave: '1' }, unmapped: 'drop' };

  it('a target declaring propertiesOnCreate gets the properties in the direct copy itself, and no updateProperties after', async () => {
    const id = await put('a.txt', { title: ' Report ', other: 'x' });
    const { to, updates } = counting(true);
    const copyFrom = jest.spyOn(target.directCopy!, 'copyFrom');
    const outcome = await new DocumentCopier(definition(mapping), source, to, actor).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toMatchObject({ outcome: 'p' });
    expect(copyFrom).toHaveBeenCalledWith(expect.anything(), id, expect.objectContaining({ properties: { Title: 'Report', Wave: '1' } }), actor, undefined);
    expect(updates).not.toHaveBeenCalled();
    expect((await target.getItem(await target.idByPath('/out', 'a.txt'))).properties).toEqual({ Title: 'Report', Wave: '1' });
  });

  it('a streamed copy (no localFiles at the source) carries them in createFile', async () => {
    const id = await put('a.txt', { title: 'Streamed' });
    const streaming = Object.assign(Object.create(source) as ContentConnector, { localFiles: undefined });
    const { to, updates } = counting(true);
    const createFile = jest.spyOn(target, 'createFile');
    expect(await new DocumentCopier(definition(mapping), streaming, to, actor).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({ outcome: 'p' });
    expect(createFile).toHaveBeenCalledWith(expect.objectContaining({ properties: { Title: 'Streamed', Wave: '1' } }), actor);
    expect(updates).not.toHaveBeenCalled();
    expect((await target.getItem(await target.idByPath('/out', 'a.txt'))).properties).toEqual({ Title: 'Streamed', Wave: '1' });
  });

  it('a target without propertiesOnCreate gets none in the create call, and one updateProperties after the write', async () => {
    const id = await put('a.txt', { title: 'After' });
    const { to, updates } = counting(false);
    const copyFrom = jest.spyOn(target.directCopy!, 'copyFrom');
    expect(await new DocumentCopier(definition(mapping), source, to, actor).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({ outcome: 'p' });
    expect(copyFrom.mock.calls[0][2]).not.toHaveProperty('properties');
    expect(updates).toHaveBeenCalledTimes(1);
    expect((await target.getItem(await target.idByPath('/out', 'a.txt'))).properties).toEqual({ Title: 'After', Wave: '1' });
  });

  it('a property the create call refuses is an e naming it and its reason, with nothing written', async () => {
    const id = await put('a.txt', { title: 'x' });
    const outcome = await new DocumentCopier(definition({ properties: { title: 'svc_title' }, unmapped: 'drop' }), source, target, actor).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toEqual({
      docId: id,
      outcome: 'e',
      sourcePath: '/in/a.txt',
      message: "PROPERTY_REFUSED: INVALID_PARAMETER: Invalid parameter 'svc_title': 'svc_title' is a built-in property and cannot be set; nothing was written",
    });
    await expect(target.idByPath('/out', 'a.txt')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reads the source documents of concurrent copies with one getItems call, no getItem', async () => {
    const ids = await Promise.all(['a', 'b', 'c', 'd'].map((n) => put(`${n}.txt`, { title: n })));
    const getItems = jest.spyOn(source, 'getItems');
    const getItem = jest.spyOn(source, 'getItem');
    const copier = new DocumentCopier(definition(mapping), source, target, actor);
    const outcomes = await Promise.all(ids.map((id, i) => copier.copy({ id, rel: `${'abcd'[i]}.txt` }, fresh, false, guard)));
    expect(outcomes.map((o) => o?.outcome)).toEqual(['p', 'p', 'p', 'p']);
    expect(getItems).toHaveBeenCalledTimes(1);
    expect(getItems.mock.calls[0][0]).toEqual(ids);
    expect(getItem).not.toHaveBeenCalled();
    expect((await target.getItem(await target.idByPath('/out', 'c.txt'))).properties).toEqual({ Title: 'c', Wave: '1' });
  });

  it('a document the batch leaves out (gone since the listing) is asked with getItem, whose error is its outcome; a dry run plans the same', async () => {
    const id = await put('a.txt', { title: 'x' });
    await source.deleteItem(id, true, actor);
    const getItem = jest.spyOn(source, 'getItem');
    const outcome = await new DocumentCopier(definition(mapping), source, target, actor).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toMatchObject({ outcome: 'e', message: `ITEM_NOT_FOUND: Item '${id}' not found` });
    expect(getItem).toHaveBeenCalledWith(id);
    const steps = planSteps(definition(mapping), source, target);
    await expect(steps.map({ id, rel: 'a.txt' }, new PlanNotes())).rejects.toBeInstanceOf(NotFoundError);
  });
});
