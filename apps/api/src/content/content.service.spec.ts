import { Readable } from 'node:stream';
import { GatewayError, InvalidArgumentError, NotFoundError, NotSupportedError, type ContentConnector, type ItemInfo } from '@gateway/connector-api';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import type { IncomingContent } from '../common/incoming-content';
import { Page } from '../common/paging';
import type { ConnectorRegistry } from '../connectors/connector-registry.service';
import { ContentService } from './content.service';
import { DownloadOffload } from '../common/offload';
import { StreamedObject } from '../common/streamed-object';
import type { UploadsService } from '../uploads/uploads.service';
import { collectable, gatedBatches, nextText } from '../../../../test/support/retention';

const user: AuthenticatedUser = { username: 'alice', roles: ['user'] };

const docItem: ItemInfo = { id: 'doc', name: 'doc.txt', path: '/f/doc.txt', baseType: 'document', size: 3, etag: 'e1', modified: new Date(0) };
const folderItem: ItemInfo = { id: 'folder', name: 'f', path: '/f', baseType: 'folder' };

/** A connector with the core operations only: every optional group is missing. */
function coreOnly(overrides: Partial<ContentConnector> = {}): ContentConnector {
  const items: Record<string, ItemInfo> = { doc: docItem, folder: folderItem };
  return {
    id: 'core',
    typeId: 'coreonly',
    description: '',
    publicParams: {},
    describeRepository: jest.fn(),
    rootFolder: jest.fn(),
    types: jest.fn(async () => ({ file: 'File' })),
    checkHealth: jest.fn(),
    getItem: jest.fn(async (id: string) => {
      if (!items[id]) throw new NotFoundError('item', id);
      return items[id];
    }),
    openContent: jest.fn(async () => Readable.from([Buffer.from('abc')])),
    idByPath: jest.fn(async (folderPath: string, name: string) => `${folderPath}/${name}`),
    listFolder: jest.fn(async () => ({ items: [docItem], nextCursor: 'next' })),
    createFile: jest.fn(async () => 'created'),
    deleteItem: jest.fn(async (id: string) => id),
    ...overrides,
  };
}

function serviceFor(connector: ContentConnector): ContentService {
  const registry = { get: (id: string) => (id === connector.id ? connector : (() => { throw new NotFoundError('connector', id); })()) };
  return new ContentService(registry as unknown as ConnectorRegistry, new DownloadOffload(undefined), {} as UploadsService);
}

/** A body that records whether anyone read it. */
function body(content?: string): IncomingContent & { read: boolean } {
  const b = {
    read: false,
    contentType: 'application/octet-stream',
    mediaType: 'application/octet-stream',
    async rawBody() {
      b.read = true;
      return content === undefined ? undefined : Readable.from([Buffer.from(content)]);
    },
    rawStream() {
      b.read = true;
      return Readable.from([Buffer.from(content ?? '')]);
    },
    async receiveFile() {
      b.read = true;
      throw new Error('not expected');
    },
  };
  return b as unknown as IncomingContent & { read: boolean };
}

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (e) {
    expect(e).toBeInstanceOf(GatewayError);
    return e as GatewayError;
  }
  throw new Error('expected a failure');
}

describe('ContentService on a connector without optional capabilities', () => {
  const service = serviceFor(coreOnly());

  it.each([
    ['updateFile', () => service.update('core', { fileId: 'doc' }, { fileId: 'doc' }, body('new'), user)],
    ['updateFile', () => service.updateContent('core', { fileId: 'doc' }, body('new'), user)],
    ['updateProperties', () => service.update('core', { fileId: 'doc' }, { fileId: 'doc', a: 'b' }, body(), user)],
    ['updateProperties', () => service.updateProperties('core', 'doc', { fileId: 'doc', a: 'b' }, user)],
    ['listVersions', () => service.listVersions('core', 'doc')],
    ['checkIn', () => service.checkIn('core', { id: 'doc' }, user)],
    ['checkOut', () => service.checkOut('core', 'doc', user)],
    ['createFolder', () => service.createFolder('core', '/x', user)],
    ['deleteFolder', () => service.delete('core', { path: '/x' }, user)],
  ])('answers NotSupportedError naming %s', async (capability, call) => {
    const error = await failure(call());
    expect(error).toBeInstanceOf(NotSupportedError);
    expect(error.details).toEqual({ capability, connectorType: 'coreonly' });
  });

  it('refuses a content update without reading the body', async () => {
    const b = body('new');
    await failure(service.updateContent('core', { fileId: 'doc' }, b, user));
    expect(b.read).toBe(false);
  });

  it('answers deleteFolder 501 for a folder group without deleteFolder', async () => {
    const s = serviceFor(coreOnly({ folders: { createFolder: jest.fn(async () => 'f') } }));
    const error = await failure(s.delete('core', { path: '/x' }, user));
    expect(error.details.capability).toBe('deleteFolder');
  });
});

describe('ContentService', () => {
  it('hands the download helper what it needs, opening the content only when asked', async () => {
    const connector = coreOnly();
    const source = await serviceFor(connector).fileDownload('core', 'doc');
    expect(source).toMatchObject({ size: 3, fileName: 'doc.txt', etag: 'e1' });
    expect(connector.openContent).not.toHaveBeenCalled();
    await source.open({ start: 1, end: 2 });
    expect(connector.openContent).toHaveBeenCalledWith('doc', { start: 1, end: 2 });
  });

  it('refuses to download a folder, naming id', async () => {
    const error = await failure(serviceFor(coreOnly()).fileDownload('core', 'folder'));
    expect((error as InvalidArgumentError).parameter).toBe('id');
  });

  it('answers 404 for an unknown connector', async () => {
    const error = await failure(serviceFor(coreOnly()).properties('nope', 'doc'));
    expect(error.details).toMatchObject({ resource: 'connector', id: 'nope' });
  });

  it('deletes by id with allversions defaulting to true, and wants exactly one of id and path', async () => {
    const connector = coreOnly();
    const service = serviceFor(connector);
    await service.delete('core', { id: 'doc' }, user);
    expect(connector.deleteItem).toHaveBeenLastCalledWith('doc', true, { username: 'alice' });
    await service.delete('core', { id: 'doc', allversions: false }, user);
    expect(connector.deleteItem).toHaveBeenLastCalledWith('doc', false, { username: 'alice' });
    expect(((await failure(service.delete('core', {}, user))) as InvalidArgumentError).parameter).toBe('id');
    expect(((await failure(service.delete('core', { id: 'doc', path: '/x' }, user))) as InvalidArgumentError).parameter).toBe('path');
  });

  it('passes paging through and returns the next cursor beside the spec-shaped results', async () => {
    const connector = coreOnly();
    const page = await serviceFor(connector).folderItems('core', { id: 'folder', limit: 5, cursor: 'c' });
    expect(connector.listFolder).toHaveBeenCalledWith('folder', { limit: 5, cursor: 'c' });
    expect(page).toBeInstanceOf(Page);
    expect(page.nextCursor).toBe('next');
    expect(Object.keys(page.results)).toEqual(['/f/doc.txt']);
  });

  // A whole-folder listing is written batch by batch; a batch of items the service still referenced
  // while the answer waits on the socket would live into the old generation (a 100,000-item folder
  // left 70-90 MB there).
  it('holds no batch of items it has written while the listing waits for the next one', async () => {
    const item = (i: number) => {
      const info: ItemInfo = { id: `d${i}`, name: `d${i}`, path: `/f/d${i}`, baseType: 'document', description: 'x'.repeat(64 * 1024) };
      return { batch: [info], tracked: info };
    };
    const source = gatedBatches(3, item);
    const connector = coreOnly({ folderBatches: jest.fn(source.batches) });
    const page = await serviceFor(connector).folderItems('core', { id: 'folder' });
    const reader = (page.results as StreamedObject).toEnvelope().getStream()[Symbol.asyncIterator]();

    let text = await nextText(reader);
    expect(text).toContain('"/f/d0":{"BaseType":"document"');
    expect(await collectable(source.refs[0])).toBe(true);
    source.release(1);
    text += await nextText(reader);
    expect(text).toContain('"/f/d1":{');
    expect(await collectable(source.refs[1])).toBe(true);
    source.release(2);
    for (let more = await nextText(reader); more !== ''; more = await nextText(reader)) text += more;
    expect(Object.keys(JSON.parse(text).results)).toEqual(['/f/d0', '/f/d1', '/f/d2']);
  });

  it('checks the type against the types call before reading the upload', async () => {
    const b = body();
    const error = await failure(serviceFor(coreOnly()).createFile('core', { folderId: 'folder', type: 'nope' }, b, user));
    expect((error as InvalidArgumentError).parameter).toBe('type');
    expect(b.read).toBe(false);
  });

  describe('update', () => {
    function updatable() {
      return coreOnly({
        contentUpdate: { updateContent: jest.fn(async (id: string) => id) },
        propertyUpdate: { updateProperties: jest.fn(async (id: string) => id) },
      });
    }

    it('takes a body as new content, then sets the properties given beside it', async () => {
      const connector = updatable();
      await serviceFor(connector).update('core', { fileId: 'doc' }, { fileId: 'doc', status: 'final' }, body('new'), user);
      expect(connector.contentUpdate!.updateContent).toHaveBeenCalledWith('doc', expect.objectContaining({ mimeType: 'application/octet-stream' }), { username: 'alice' });
      expect(connector.propertyUpdate!.updateProperties).toHaveBeenCalledWith('doc', { status: 'final' }, { username: 'alice' });
    });

    it('updates the properties alone without a body', async () => {
      const connector = updatable();
      await serviceFor(connector).update('core', { fileId: 'doc' }, { fileId: 'doc', status: 'final' }, body(), user);
      expect(connector.contentUpdate!.updateContent).not.toHaveBeenCalled();
      expect(connector.propertyUpdate!.updateProperties).toHaveBeenCalledWith('doc', { status: 'final' }, { username: 'alice' });
    });

    it('refuses a request with neither body nor properties, naming body', async () => {
      const error = await failure(serviceFor(updatable()).update('core', { fileId: 'doc' }, { fileId: 'doc' }, body(), user));
      expect((error as InvalidArgumentError).parameter).toBe('body');
    });

    it('finds the document by fileName inside folderId', async () => {
      const connector = updatable();
      await serviceFor(connector).update('core', { fileName: 'doc.txt', folderId: 'folder' }, { fileName: 'doc.txt', folderId: 'folder' }, body('x'), user);
      expect(connector.idByPath).toHaveBeenCalledWith('/f', 'doc.txt');
      expect(connector.contentUpdate!.updateContent).toHaveBeenCalledWith('/f/doc.txt', expect.anything(), expect.anything());
    });

    it.each([
      [{}, 'fileId'],
      [{ fileName: 'doc.txt' }, 'folderId'],
      [{ folderId: 'folder' }, 'fileName'],
      [{ fileId: 'doc', fileName: 'doc.txt', folderId: 'folder' }, 'fileId'],
      [{ fileName: 'doc.txt', folderId: 'doc' }, 'folderId'],
    ])('refuses the locator %j, naming %s', async (query, parameter) => {
      const error = await failure(serviceFor(updatable()).update('core', query, query, body('x'), user));
      expect((error as InvalidArgumentError).parameter).toBe(parameter);
    });
  });
});
