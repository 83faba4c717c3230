import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

/** Permission management (spec 4.3) on a connector without the `acls` capability: the embedded filesystem default. */
describe('Permission management on the filesystem connector', () => {
  let gw: TestGateway;
  let rootId: string;

  beforeAll(async () => {
    gw = await startGateway();
    rootId = (await gw.http().get(`${gw.api}/repo/fs/rootfolderid`).set('Authorization', adminAuth()).expect(200)).body.results.folderId;
  });
  afterAll(() => gw.close());

  const acls = (method: 'get' | 'post' | 'delete', query: Record<string, string>, connector = 'fs') =>
    gw.http()[method](`${gw.api}/repo/${connector}/acls`).query(query).set('Authorization', adminAuth());

  it.each([
    ['get', {}, undefined],
    ['post', {}, { alice: 'read' }],
    ['delete', { aclId: 'alice' }, undefined],
  ] as const)('answers %s with 501 naming the acls capability', async (method, extra, body) => {
    let req = acls(method, { id: rootId, ...extra });
    if (body) req = req.send(body);
    const res = await req;
    expect(res.status).toBe(501);
    expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_SUPPORTED', capability: 'acls', connectorType: 'filesystem' } });
  });

  it.each([
    ['get without id', () => acls('get', {}), 'id'],
    ['post with a list body', () => acls('post', { id: rootId }).send([]), 'body'],
    ['delete without aclId', () => acls('delete', { id: rootId }), 'aclId'],
    ['delete with blank acls', () => acls('delete', { id: rootId, acls: ' , ' }), 'aclId'],
  ])('validates parameters before the capability: %s is a 400 naming %s', async (_what, request, parameter) => {
    const res = await request();
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { parameter } });
  });

  it('answers 415 naming Content-Type for a body that is not JSON (issue 16, defect 8)', async () => {
    const res = await acls('post', { id: rootId }).set('Content-Type', 'text/plain').send('alice=read');
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ success: false, error: { parameter: 'Content-Type' } });
  });

  it('answers 404 for an unknown connector and 401 without credentials', async () => {
    const res = await acls('get', { id: rootId }, 'nope');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('CONNECTOR_NOT_FOUND');
    expect((await gw.http().get(`${gw.api}/repo/fs/acls`).query({ id: rootId })).status).toBe(401);
  });

  it('documents the three operations in the OpenAPI document', () => {
    const paths = gw.openApi.paths as Record<string, Record<string, { summary?: string }>>;
    const route = Object.keys(paths).find((p) => p.endsWith('/repo/{connectorId}/acls'));
    expect(route).toBeDefined();
    expect(Object.fromEntries(Object.entries(paths[route!]).map(([m, op]) => [m, op.summary]))).toMatchObject({
      get: 'Get ACLs',
      post: 'Post ACLs',
      delete: 'Delete ACLs',
    });
  });
});
