/**
 * The `sharepoint` engine: the SharePoint REST simulator (simulators/sharepoint/main.ts), started by
 * ms-simulator.ts like the Graph one. `connectorParams` is exactly the `params` object of a `sharepoint`
 * connector that reaches it.
 */
import type { EngineInfoBase, Run, Started } from './engines';
import { startMicrosoftSimulator, type SimulatorInfoFields } from './ms-simulator';

export interface SharePointInfo extends EngineInfoBase, SimulatorInfoFields {
  name: 'sharepoint';
  /** The site collection the simulator holds: https://127.0.0.1:P/sites/gateway (subsite /team). */
  siteUrl: string;
  /** The params of a `sharepoint` connector pointed at this simulator. */
  connectorParams: {
    tenantId: string;
    clientId: string;
    certificatePath: string;
    certificateThumbprint: string;
    authorityHost: string;
    siteUrl: string;
    library: string;
    caFile: string;
  };
}

export async function startSharePoint(dir: string, run: Run): Promise<Started<'sharepoint'>> {
  return startMicrosoftSimulator('sharepoint', dir, run, [], (c, common) => {
    const siteUrl = `${c.origin}/sites/gateway`;
    return {
      name: 'sharepoint',
      ...common,
      siteUrl,
      connectorParams: {
        tenantId: c.tenantId,
        clientId: c.clientId,
        certificatePath: c.certificatePath,
        certificateThumbprint: c.certificateThumbprint,
        authorityHost: c.origin,
        siteUrl,
        library: 'Documents',
        caFile: c.caFile,
      },
    };
  });
}
