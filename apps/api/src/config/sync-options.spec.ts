import { InvalidArgumentError, type ContentConnector } from '@gateway/connector-api';
import { checkSyncOptions, type SyncOptions } from './sync-options';

const mover = { id: 'fs', contentUpdate: {}, move: {} } as unknown as ContentConnector;
const plain = { id: 's3', typeId: 's3' } as unknown as ContentConnector;

function refusal(options: SyncOptions & { removeSource?: boolean }, target = mover, folder = '/out'): string | undefined {
  try {
    checkSyncOptions({ removeSource: false, ...options }, target, folder);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return `${(e as InvalidArgumentError).parameter}: ${(e as Error).message}`;
  }
}

describe('checkSyncOptions', () => {
  it('takes the sync options with mode sync, and none without', () => {
    expect(refusal({ mode: 'sync', targetChanged: 'version', deletions: 'archive', archiveFolder: '/archive' })).toBeUndefined();
    expect(refusal({ mode: 'copy' })).toBeUndefined();
    expect(refusal({ deletions: 'delete' })).toBe("options.deletions: Invalid parameter 'options.deletions': only with options.mode sync");
    expect(refusal({ mode: 'copy', targetChanged: 'overwrite' })).toMatch(/^options.targetChanged: .*only with options.mode sync/);
  });

  it('refuses what the target cannot do or what contradicts sync, naming the option', () => {
    expect(refusal({ mode: 'sync', removeSource: true })).toMatch(/^options.removeSource: /);
    expect(refusal({ mode: 'sync', targetChanged: 'version' }, plain)).toMatch(/^options.targetChanged: .*cannot add versions/);
    expect(refusal({ mode: 'sync', deletions: 'archive' })).toMatch(/^options.archiveFolder: .*required with options.deletions archive/);
    expect(refusal({ mode: 'sync', deletions: 'archive', archiveFolder: '/a' }, plain)).toMatch(/^options.deletions: .*cannot move documents/);
    expect(refusal({ mode: 'sync', deletions: 'archive', archiveFolder: '/out/archive' })).toMatch(/^options.archiveFolder: .*outside target.folderPath/);
    expect(refusal({ mode: 'sync', deletions: 'delete', archiveFolder: '/a' })).toMatch(/^options.archiveFolder: .*only with options.deletions archive/);
  });
});
