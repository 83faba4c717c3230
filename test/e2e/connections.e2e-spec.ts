import { CAPABILITY_NAMES, EXTENSION_CAPABILITY_NAMES } from '@gateway/connector-api';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

describe('Connections and repository calls (spec 4.4) on the embedded default', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  it('lists the default filesystem connector with id fs', async () => {
    const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', adminAuth()).expect(200);
    expect(res.body).toEqual({
      success: true,
      results: [{ id: 'fs', description: 'Default filesystem repository', connectorId: 'fs', typeId: 'filesystem' }],
    });
  });

  it('reports every spec capability (and the search/index extensions) as a boolean and the root folder id', async () => {
    const res = await gw.http().get(`${gw.api}/repo/fs/repositoryInfo`).set('Authorization', adminAuth()).expect(200);
    const info = res.body.results;
    expect(Object.keys(info.capabilities).sort()).toEqual([...CAPABILITY_NAMES, ...EXTENSION_CAPABILITY_NAMES].sort());
    for (const name of CAPABILITY_NAMES) expect(typeof info.capabilities[name]).toBe('boolean');
    expect(info.capabilities.search).toBe(false);
    expect(info.capabilities.getContent).toBe(true);
    expect(info.capabilities.getAllSites).toBe(false);
    const root = await gw.http().get(`${gw.api}/repo/fs/rootfolderid`).set('Authorization', adminAuth()).expect(200);
    expect(root.body.results.folderId).toBe(info.rootFolderId);
    expect(root.body.results.folderPath).toBe('/');
    expect(info.params.root).toBe(`${gw.dataDir}/repository`);
  });

  it('lists the document types as a string map', async () => {
    const res = await gw.http().get(`${gw.api}/repo/fs/types`).set('Authorization', adminAuth()).expect(200);
    expect(Object.keys(res.body.results).length).toBeGreaterThan(0);
    for (const v of Object.values(res.body.results)) expect(typeof v).toBe('string');
  });

  it.each(['repositoryInfo', 'rootfolderid', 'types'])('answers 404 naming an unknown connector on %s', async (call) => {
    const res = await gw.http().get(`${gw.api}/repo/nope/${call}`).set('Authorization', adminAuth()).expect(404);
    expect(res.body).toMatchObject({ success: false, error: { code: 'CONNECTOR_NOT_FOUND', resource: 'connector', id: 'nope' } });
    expect(res.body.message).toContain("'nope'");
  });
});
