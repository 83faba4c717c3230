import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { InvalidArgumentError, NotFoundError, type Actor, type ContentConnector, type PropertyDefinition, type PropertyUpdateCapability } from '@gateway/connector-api';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';
import type { JobDefinition } from '../../config/job-definition.dto';
import type { PropertyMapping } from '../../config/property-mapping.dto';
import { DocumentCopier, type CopyGuard } from '../document-copier';

const actor: Actor = { username: 'alice' };

/** A copy job's mapping on the copy path, between real filesystem connectors (they keep custom properties). */
describe('DocumentCopier with a property mapping', () => {
  let dir: string;
  let source: ContentConnector;
  let target: ContentConnector;

  beforeEach(async () => {
    dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'mapping-')));
    const open = async (id: string) =>
      new FilesystemConnectorType().create({ id, typeId: 'filesystem', description: id, params: { root: path.join(dir, id) } }, { dataDir: dir });
    source = await open('src');
    target = await open('dst');
  });
  afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

  const guard: CopyGuard = { cancelled: false, track: (s: Readable) => s };
  const fresh = { fresh: true, claimedAt: Date.now() };

  function copier(mapping: PropertyMapping, to: ContentConnector = target): DocumentCopier {
    const def: JobDefinition = {
      jobName: 'j',
      jobGroup: 'g',
      source: { connectorId: 'src', folderPath: '/in', recursive: true },
      target: { connectorId: 'dst', folderPath: '/out' },
      options: { onExisting: 'skip', copyVersions: false, maxErrors: 0, removeSource: false, exclude: [], mapping },
    };
    return new DocumentCopier(def, source, to, actor);
  }

  async function put(name: string, properties: Record<string, string>): Promise<string> {
    const folderId = await source.folders!.createFolder('/in', actor);
    const id = await source.createFile({ folderId, fileName: name, mimeType: 'text/plain', content: Readable.from([Buffer.from('alpha')]) }, actor);
    if (Object.keys(properties).length > 0) await source.propertyUpdate!.updateProperties(id, properties, actor);
    return id;
  }

  async function targetProperties(name: string): Promise<Record<string, string | null> | undefined> {
    return (await target.getItem(await target.idByPath('/out', name))).properties;
  }

  async function exists(name: string): Promise<boolean> {
    try {
      await target.idByPath('/out', name);
      return true;
    } catch (e) {
      if (e instanceof NotFoundError) return false;
      throw e;
    }
  }

  /** The filesystem target with a declared schema (the filesystem connector takes any name, so cannot tell). */
  function declaring(schema: PropertyDefinition[]): ContentConnector {
    const update: PropertyUpdateCapability = {
      updateProperties: (id, props, a) => target.propertyUpdate!.updateProperties(id, props, a),
      describeProperties: async () => schema,
    };
    return Object.assign(Object.create(target) as ContentConnector, { propertyUpdate: update });
  }

  it('writes mapped, transformed and constant properties, and keeps the unmapped ones by default', async () => {
    const id = await put('a.txt', { 'cm:title': '  Quarterly Report ', issued: '2026-03-01T14:05:09+02:00', tags: 'a;b', other: 'kept' });
    const mapping: PropertyMapping = {
      properties: { 'cm:title': { to: 'Title', transform: ['trim', 'uppercase'] }, issued: { to: 'DocDate', transform: 'date' }, tags: { to: 'Tags', transform: { split: ';' } }, missing: { to: 'Status', default: 'draft' } },
      constants: { Wave: '1' },
    };
    const outcome = await copier(mapping).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toMatchObject({ outcome: 'p' });
    expect(await targetProperties('a.txt')).toEqual({ Title: 'QUARTERLY REPORT', DocDate: '2026-03-01T12:05:09.000Z', Tags: 'a,b', Status: 'draft', Wave: '1', other: 'kept' });
  });

  it('drops unmapped properties under drop, and fails the document naming the first one under fail, writing nothing', async () => {
    const id = await put('a.txt', { keep: 'k', extra: 'x' });
    expect(await copier({ properties: { keep: 'Keep' }, unmapped: 'drop' }).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({ outcome: 'p' });
    expect(await targetProperties('a.txt')).toEqual({ Keep: 'k' });
    const other = await put('b.txt', { keep: 'k', extra: 'x' });
    const failed = await copier({ properties: { keep: 'Keep' }, unmapped: 'fail' }).copy({ id: other, rel: 'b.txt' }, fresh, false, guard);
    expect(failed).toEqual({ docId: other, outcome: 'e', sourcePath: '/in/b.txt', message: "UNMAPPED_PROPERTY: property 'extra' is not mapped (mapping.unmapped is fail)" });
    expect(await exists('b.txt')).toBe(false);
  });

  it('refuses a value the target declares it cannot take before writing the document, naming property and reason', async () => {
    const id = await put('a.txt', { count: 'twelve', free: 'x' });
    const to = declaring([{ name: 'Count', kind: 'number', multiValue: false, writable: true }]);
    const outcome = await copier({ properties: { count: 'Count' } }, to).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toEqual({ docId: id, outcome: 'e', sourcePath: '/in/a.txt', message: "PROPERTY_REFUSED: property 'Count': 'twelve' is not a number" });
    expect(await exists('a.txt')).toBe(false);
    // The same target takes a number; `free` is not declared there, so keep leaves it out.
    await source.propertyUpdate!.updateProperties(id, { count: '12' }, actor);
    expect(await copier({ properties: { count: 'Count' } }, to).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({ outcome: 'p' });
    expect(await targetProperties('a.txt')).toEqual({ Count: '12' });
  });

  it('a refusal at the write is an error naming the property, and the copy is removed so that a later run writes it again', async () => {
    const id = await put('a.txt', { secret: 'x' });
    const refusing: PropertyUpdateCapability = {
      updateProperties: async (_id, props) => {
        throw new InvalidArgumentError(Object.keys(props)[0], `Invalid parameter '${Object.keys(props)[0]}': the property is read-only`, 'INVALID_PROPERTY');
      },
    };
    const to = Object.assign(Object.create(target) as ContentConnector, { propertyUpdate: refusing });
    const outcome = await copier({}, to).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toEqual({
      docId: id,
      outcome: 'e',
      sourcePath: '/in/a.txt',
      targetId: expect.any(String),
      message: "PROPERTY_REFUSED: INVALID_PROPERTY: Invalid parameter 'secret': the property is read-only; the copy is removed",
    });
    expect(await exists('a.txt')).toBe(false);
  });

  it('passes the mapped type to the target, which refuses one it does not have', async () => {
    const id = await put('a.txt', {});
    const outcome = await copier({ types: { file: 'cmis:document' } }).copy({ id, rel: 'a.txt' }, fresh, false, guard);
    expect(outcome).toMatchObject({ outcome: 'e', message: expect.stringMatching(/'type'/) });
    expect(await exists('a.txt')).toBe(false);
  });

  it('without a propertyUpdate group at the target, a mapped property fails the document and kept ones are left out', async () => {
    const id = await put('a.txt', { a: '1' });
    const bare = Object.assign(Object.create(target) as ContentConnector, { propertyUpdate: undefined });
    expect(await copier({ properties: { a: 'A' } }, bare).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({
      outcome: 'e',
      message: "PROPERTY_REFUSED: property 'A': the target connector cannot set properties (no propertyUpdate group)",
    });
    expect(await copier({}, bare).copy({ id, rel: 'a.txt' }, fresh, false, guard)).toMatchObject({ outcome: 'p' });
  });
});
