import { SharePointConnectorType } from '@gateway/connector-sharepoint';
import type { ContentConnector } from '@gateway/connector-api';
import { SimulatorControl } from '../../engines/simulators/common/control';
import { SharePointSetup, useSharePointEngine } from '../fixtures/sharepoint-engine';
import type { ChangeFeedFixture } from './types';

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** The UniqueId in a gateway id (`f.<uid>`, `d.<uid>`). */
const uidOf = (id: string) => id.slice(2);

/**
 * The SharePoint connector's GetChanges feed against the SharePoint simulator. A page size of 3 makes
 * every pass span several pages. Renames and moves are `SP.File.MoveTo(newurl, flags=1)`, made directly.
 */
export const fixture: ChangeFeedFixture = {
  typeId: 'sharepoint',
  async setup() {
    const engine = await useSharePointEngine();
    const direct = new SharePointSetup(engine.info);
    try {
      const control = new SimulatorControl(engine.info.url, engine.info.caFile);
      const folder = await direct.createTestFolder('changes');
      const connector: ContentConnector = await new SharePointConnectorType().create(
        { id: 'change-feed-sharepoint', typeId: 'sharepoint', description: 'Change feed contract (SharePoint simulator)', params: { ...engine.info.connectorParams, pageSize: 3 } },
        { dataDir: '' },
      );
      const serverPath = async (kind: 'File' | 'Folder', id: string) => (await direct.call('GET', `web/Get${kind}ById(${literal(uidOf(id))})?$select=ServerRelativeUrl`)).ServerRelativeUrl as string;
      const moveTo = async (id: string, newUrl: string) => {
        await direct.call('POST', `web/GetFileById(${literal(uidOf(id))})/MoveTo(newurl=@u,flags=1)?@u=${encodeURIComponent(literal(newUrl))}`);
      };
      return {
        connector,
        folderPath: folder.path,
        rename: async (id, name) => {
          const from = await serverPath('File', id);
          await moveTo(id, `${from.slice(0, from.lastIndexOf('/'))}/${name}`);
        },
        move: async (id, targetFolderId) => {
          const from = await serverPath('File', id);
          await moveTo(id, `${await serverPath('Folder', targetFolderId)}/${from.slice(from.lastIndexOf('/') + 1)}`);
        },
        expireTokens: () => control.expireChangeTokens(),
        teardown: async () => {
          await connector.close?.();
          direct.close();
          await engine.release();
        },
      };
    } catch (e) {
      direct.close();
      await engine.release();
      throw e;
    }
  },
};
