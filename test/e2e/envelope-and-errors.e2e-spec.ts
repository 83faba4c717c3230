import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

describe('Envelope, errors and body limits', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_JSON_LIMIT_BYTES: '2048' } });
  });
  afterAll(() => gw.close());

  it('wraps JSON answers in { success, results }', async () => {
    const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', adminAuth()).expect(200);
    expect(Object.keys(res.body).sort()).toEqual(['results', 'success']);
    expect(res.body.success).toBe(true);
  });

  it('answers an unknown route with a JSON 404 in the error shape', async () => {
    const res = await gw.http().get(`${gw.api}/no/such/route`).set('Authorization', adminAuth()).expect(404);
    expect(res.body).toEqual({ success: false, message: `No route GET ${gw.api}/no/such/route`, error: { code: 'ROUTE_NOT_FOUND' } });
  });

  it('answers malformed JSON with 400 naming the body', async () => {
    const res = await gw
      .http()
      .post(`${gw.api}/admin/users`)
      .set('Authorization', adminAuth())
      .set('Content-Type', 'application/json')
      .send('{"username": "x",')
      .expect(400);
    expect(res.body.error).toEqual({ code: 'INVALID_BODY', parameter: 'body' });
  });

  it('answers an oversized body with 413 and the limit', async () => {
    const res = await gw
      .http()
      .post(`${gw.api}/admin/users`)
      .set('Authorization', adminAuth())
      .send({ username: 'big', password: 'x'.repeat(5000), roles: ['user'] })
      .expect(413);
    expect(res.body).toMatchObject({ success: false, error: { code: 'PAYLOAD_TOO_LARGE', parameter: 'body', limit: 2048 } });
    // nothing half-written
    const list = await gw.http().get(`${gw.api}/admin/users`).set('Authorization', adminAuth()).expect(200);
    expect(list.body.results.map((u: { username: string }) => u.username)).not.toContain('big');
  });

  it('echoes a safe X-Request-Id and generates one otherwise', async () => {
    const given = await gw.http().get(`${gw.api}/health`).set('X-Request-Id', 'trace-123').expect(200);
    expect(given.headers['x-request-id']).toBe('trace-123');
    const generated = await gw.http().get(`${gw.api}/health`).set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
