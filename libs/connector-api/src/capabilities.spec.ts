import { Readable } from 'node:stream';
import { CAPABILITY_NAMES, EXTENSION_CAPABILITY_NAMES, deriveCapabilities, group } from './capabilities';
import type { Connector, ContentConnector } from './connector';

function coreOnly(): ContentConnector {
  const fail = async (): Promise<never> => {
    throw new Error('not called');
  };
  return {
    id: 'x',
    typeId: 'test',
    description: '',
    publicParams: {},
    describeRepository: fail,
    rootFolder: fail,
    types: fail,
    checkHealth: fail,
    getItem: fail,
    openContent: async () => Readable.from([]),
    idByPath: fail,
    listFolder: fail,
    createFile: fail,
    deleteItem: fail,
  };
}

describe('deriveCapabilities', () => {
  it('answers every spec capability name and the gateway extensions, and only those', () => {
    expect(Object.keys(deriveCapabilities(coreOnly())).sort()).toEqual([...CAPABILITY_NAMES, ...EXTENSION_CAPABILITY_NAMES].sort());
  });

  it('marks only the core operations for a driver without capability groups', () => {
    const caps = deriveCapabilities(coreOnly());
    const on = Object.entries(caps).filter(([, v]) => v).map(([k]) => k).sort();
    expect(on).toEqual(
      ['createFile', 'deleteObjectByID', 'getContent', 'getFileContent', 'getFileItem', 'getObjectIDByPath', 'getObjectProperties', 'getRootFolderId', 'getTypes', 'listFolderItems'].sort(),
    );
  });

  it('follows the groups a driver implements', () => {
    const fail = async (): Promise<never> => {
      throw new Error('not called');
    };
    const caps = deriveCapabilities({
      ...coreOnly(),
      checkInOut: { checkIn: fail, checkOut: fail },
      versioning: { listVersions: fail },
      folders: { createFolder: fail },
    });
    expect(caps.checkIn && caps.checkOut && caps.listVersions && caps.createFolder).toBe(true);
    // createFolder without deleteFolder: folders cannot be deleted by path
    expect(caps.deleteFolder).toBe(false);
    expect(caps.updateFile).toBe(false);
    expect(deriveCapabilities({ ...coreOnly(), folders: { createFolder: fail, deleteFolder: fail } }).deleteFolder).toBe(true);
  });

  it('reports only search for a search-only connector, none of the content operations', () => {
    const fail = async (): Promise<never> => {
      throw new Error('not called');
    };
    const searchOnly: Connector = {
      id: 's',
      typeId: 'solr',
      description: '',
      publicParams: {},
      checkHealth: fail,
      search: { settings: { defaultFilters: [], timeoutMs: 1, maxRows: 1 }, select: fail, rawQuery: fail },
    };
    const on = Object.entries(deriveCapabilities(searchOnly)).filter(([, v]) => v).map(([k]) => k);
    expect(on).toEqual(['search']);
  });
});

describe('group', () => {
  class Driver {
    readonly prefix = 'v';
    readonly versioning = group(this, 'listVersions');
    async listVersions(id: string): Promise<string[]> {
      return [`${this.prefix}:${id}`];
    }
  }

  it('calls the connector method of the same name with the connector as this', async () => {
    await expect(new Driver().versioning.listVersions('a')).resolves.toEqual(['v:a']);
  });

  it('looks the method up at call time, so a replacement on the instance is what runs', async () => {
    const driver = new Driver();
    driver.listVersions = async (id) => [`replaced:${id}`];
    await expect(driver.versioning.listVersions('b')).resolves.toEqual(['replaced:b']);
  });
});
