/**
 * The `graph` engine: the Microsoft Graph (drives) simulator (simulators/graph/main.ts), started by
 * ms-simulator.ts like the SharePoint one. `connectorParams` is exactly the `params` object of a `graph` connector
 * that reaches it (copy it into a gateway configuration to point a gateway at the simulator).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EngineInfoBase, Run, Started } from './engines';
import { startMicrosoftSimulator, type SimulatorInfoFields } from './ms-simulator';

export interface GraphInfo extends EngineInfoBase, SimulatorInfoFields {
  name: 'graph';
  /** https://127.0.0.1:P/v1.0 */
  graphUrl: string;
  /** The root site and its "Documents" drive. */
  siteId: string;
  driveId: string;
  /** The params of a `graph` connector pointed at this simulator. */
  connectorParams: {
    tenantId: string;
    clientId: string;
    clientSecret: string;
    authorityHost: string;
    graphUrl: string;
    siteId: string;
    driveId: string;
    caFile: string;
  };
}

export async function startGraph(dir: string, run: Run): Promise<Started<'graph'>> {
  return startMicrosoftSimulator('graph', dir, run, ['graph-info.json'], (c, common, state) => {
    const g = JSON.parse(fs.readFileSync(path.join(state, 'graph-info.json'), 'utf8')) as { graphUrl: string; siteId: string; driveId: string };
    return {
      name: 'graph',
      ...common,
      graphUrl: g.graphUrl,
      siteId: g.siteId,
      driveId: g.driveId,
      connectorParams: {
        tenantId: c.tenantId,
        clientId: c.clientId,
        clientSecret: c.clientSecret,
        authorityHost: c.origin,
        graphUrl: g.graphUrl,
        siteId: g.siteId,
        driveId: g.driveId,
        caFile: c.caFile,
      },
    };
  });
}
