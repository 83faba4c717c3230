import type { SimulatorDefinition } from '../common/server';
import { createSharePointApi } from './api';

/**
 * The SharePoint REST simulator on the common HTTPS server. The token audience is the simulator's own
 * origin (SharePoint Online's is `https://{tenant}.sharepoint.com`: the connector asks for
 * `<siteUrl origin>/.default`). Throttling answers carry SharePoint's own error body.
 */
export const sharePointSimulator: SimulatorDefinition = {
  name: 'sharepoint',
  resources: (origin) => [origin],
  roles: ['Sites.FullControl.All'],
  throttleBody: (status) => ({
    'odata.error': {
      code: status === 429 ? '-2147024860, Microsoft.SharePoint.SPQueryThrottledException' : '-2146232060, Microsoft.SharePoint.SPException',
      message: { lang: 'en-US', value: status === 429 ? 'The request has been throttled.' : 'Server Too Busy' },
    },
  }),
  internalErrorBody: (message) => ({ 'odata.error': { code: '-2146233088, System.InvalidOperationException', message: { lang: 'en-US', value: message } } }),
  createHandler: (context) =>
    createSharePointApi({
      origin: context.origin,
      dir: context.dir,
      tenantId: context.tenantId,
      verifyBearer: (header) => {
        const check = context.identity.verifyBearer(header, context.origin);
        if (!check.ok) return { ok: false, message: check.message };
        return { ok: true, appId: check.claims.appid, viaSecret: check.claims.azpacr !== '2' };
      },
      downloadStream: (res) => context.faults.downloadStream(res),
    }),
};
