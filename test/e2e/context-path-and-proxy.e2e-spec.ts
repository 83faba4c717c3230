import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';

describe('Context path (GATEWAY_CONTEXT_PATH)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_CONTEXT_PATH: '/gateway/' } });
  });
  afterAll(() => gw.close());

  it('serves the API under the prefix and nowhere else', async () => {
    expect(gw.api).toBe('/gateway/api');
    await gw.http().get('/gateway/api/repo/connections').set('Authorization', adminAuth()).expect(200);
    const res = await gw.http().get('/api/repo/connections').set('Authorization', adminAuth()).expect(404);
    expect(res.body.error.code).toBe('ROUTE_NOT_FOUND');
    await gw.http().get('/gateway/api/health').expect(200);
  });

  it('puts the prefix in the OpenAPI server URL and keeps spec paths', async () => {
    const doc = await gw.http().get('/gateway/api/docs-json').expect(200);
    expect(doc.body.servers).toEqual([{ url: '/gateway' }]);
    expect(Object.keys(doc.body.paths)).toContain('/api/repo/connections');
    expect(Object.keys(doc.body.paths).every((p: string) => p.startsWith('/api/'))).toBe(true);
  });
});

describe('TRUST_PROXY', () => {
  it('without it, X-Forwarded-For cannot be used to dodge the login lock-out', async () => {
    const gw = await startGateway({ env: { GATEWAY_LOGIN_MAX_FAILURES: '2' } });
    try {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'mallory', password: 'mallory-pass-1', roles: ['user'] }).expect(201);
      const attempt = (ip: string, pw: string) =>
        gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('mallory', pw)).set('X-Forwarded-For', ip);
      await attempt('1.1.1.1', 'nope-1').expect(401);
      await attempt('2.2.2.2', 'nope-2').expect(401);
      // a third spoofed address is still the same client: locked
      await attempt('3.3.3.3', 'mallory-pass-1').expect(429);
    } finally {
      await gw.close();
    }
  });

  it('with it, the lock-out follows the client address X-Forwarded-For names', async () => {
    const gw = await startGateway({ env: { TRUST_PROXY: 'true', GATEWAY_LOGIN_MAX_FAILURES: '2' } });
    try {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'mallory', password: 'mallory-pass-1', roles: ['user'] }).expect(201);
      const attempt = (ip: string, pw: string) =>
        gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('mallory', pw)).set('X-Forwarded-For', ip);
      await attempt('1.1.1.1', 'nope-1').expect(401);
      await attempt('1.1.1.1', 'nope-2').expect(401);
      const locked = await attempt('1.1.1.1', 'mallory-pass-1').expect(429);
      expect(locked.body.error.code).toBe('TOO_MANY_REQUESTS');
      // Another client behind the same proxy is not locked out, though every request came from the same socket address.
      await attempt('2.2.2.2', 'mallory-pass-1').expect(200);
    } finally {
      await gw.close();
    }
  });

  it('with it, the OpenAPI server URL stays relative whatever scheme and host the proxy forwards', async () => {
    const gw = await startGateway({ env: { TRUST_PROXY: 'true', GATEWAY_CONTEXT_PATH: '/gateway' } });
    try {
      const doc = await gw
        .http()
        .get('/gateway/api/docs-json')
        .set('X-Forwarded-Proto', 'https')
        .set('X-Forwarded-Host', 'gw.example.org')
        .expect(200);
      // A relative server URL resolves against the https address the browser used, never a guessed http:// one.
      expect(doc.body.servers).toEqual([{ url: '/gateway' }]);
    } finally {
      await gw.close();
    }
  });
});
