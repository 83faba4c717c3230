import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GraphConnectorType } from '@gateway/connector-graph';
import type { ContentConnector } from '@gateway/connector-api';
import { SimulatorControl } from '../../engines/simulators/common/control';
import { GraphSetup, useGraphEngine } from '../fixtures/graph-engine';
import type { ChangeFeedFixture } from './types';

/**
 * The Graph connector's delta feed against the Graph simulator. A page size of 3 makes every pass span
 * several delta pages. Renames and moves are PATCHes of the drive item (name, parentReference), made
 * directly; teardown fails the suite when the simulator sent any body outside Microsoft's schemas.
 */
export const fixture: ChangeFeedFixture = {
  typeId: 'graph',
  async setup() {
    const engine = await useGraphEngine();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'change-feed-graph-'));
    try {
      const control = new SimulatorControl(engine.info.url, engine.info.caFile);
      const direct = new GraphSetup(engine.info);
      const folder = `changes-${randomBytes(4).toString('hex')}`;
      await direct.createFolder(folder);
      const params = { ...engine.info.connectorParams, pageSize: 3 };
      const connector: ContentConnector = await new GraphConnectorType().create({ id: 'change-feed-graph', typeId: 'graph', description: 'Change feed contract (Graph simulator)', params }, { dataDir });
      const patch = async (id: string, body: unknown) => {
        const res = await direct.call('PATCH', `/items/${encodeURIComponent(id)}`, body);
        if (res.status !== 200) throw new Error(`PATCH ${id}: ${res.status} ${JSON.stringify(res.json)}`);
      };
      return {
        connector,
        folderPath: `/${folder}`,
        rename: (id, name) => patch(id, { name }),
        move: (id, targetFolderId) => patch(id, { parentReference: { id: targetFolderId } }),
        expireTokens: () => control.expireDeltaTokens(),
        teardown: async () => {
          try {
            await connector.close?.();
            const report = await control.violations();
            if (report.violations.length > 0) throw new Error(`the Graph simulator sent bodies outside Microsoft's schemas: ${JSON.stringify(report.violations.slice(0, 5))}`);
          } finally {
            fs.rmSync(dataDir, { recursive: true, force: true });
            await engine.release();
          }
        },
      };
    } catch (e) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await engine.release();
      throw e;
    }
  },
};
