import { ADMIN, adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';

describe('Authentication, roles and user management', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_LOGIN_MAX_FAILURES: '3', GATEWAY_LOGIN_LOCKOUT_SECONDS: '60', TRUST_PROXY: 'true' } });
  });
  afterAll(() => gw.close());

  const createUser = (username: string, password: string, roles: string[]) =>
    gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username, password, roles });

  describe('Basic credentials', () => {
    it('answers 401 with a Basic challenge when credentials are missing', async () => {
      const res = await gw.http().get(`${gw.api}/repo/connections`).expect(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="content-gateway"/);
      expect(res.body).toEqual({ success: false, message: expect.any(String), error: { code: 'UNAUTHENTICATED' } });
    });

    it('answers 401 with a challenge for a wrong password and for an unknown user', async () => {
      for (const auth of [basic(ADMIN.username, 'wrong-password'), basic('nobody-here', 'whatever-pw')]) {
        const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', auth).set('X-Forwarded-For', '10.9.9.9').expect(401);
        expect(res.headers['www-authenticate']).toContain('Basic');
      }
    });

    it('answers 400 naming the Authorization header when it is malformed', async () => {
      for (const header of ['Basic %%%not-base64', 'Basic ' + Buffer.from('no-colon').toString('base64')]) {
        const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', header).expect(400);
        expect(res.body.error).toEqual({ code: 'MALFORMED_CREDENTIALS', parameter: 'Authorization' });
      }
    });

    it('treats another scheme as missing credentials', async () => {
      const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', 'Bearer abc').expect(401);
      expect(res.headers['www-authenticate']).toContain('Basic');
    });

    it('needs no credentials for health routes', async () => {
      await gw.http().get(`${gw.api}/health`).expect(200, { success: true, results: { status: 'ok' } });
      const ready = await gw.http().get(`${gw.api}/health/ready`).expect(200);
      expect(ready.body.results.details.database.status).toBe('up');
      expect(ready.body.results.details['connector:fs'].status).toBe('up');
      expect(ready.body.results.details.database.engine).toBe(process.env.GATEWAY_TEST_POSTGRES_URL ? 'postgres' : 'sqlite');
    });

    it('accepts non-ASCII user names and passwords (UTF-8)', async () => {
      await createUser('jose', 'contraseña-ñandú-密码', ['user']).expect(201);
      await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('jose', 'contraseña-ñandú-密码')).expect(200);
    });
  });

  describe('roles', () => {
    beforeAll(async () => {
      await createUser('plain', 'plain-password-1', ['user']).expect(201);
    });

    it('forbids admin routes to a user without the admin role (403, not 401)', async () => {
      const auth = basic('plain', 'plain-password-1');
      const list = await gw.http().get(`${gw.api}/admin/users`).set('Authorization', auth).expect(403);
      expect(list.body).toMatchObject({ success: false, error: { code: 'PERMISSION_DENIED', requiredRoles: ['admin'] } });
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', auth).send({ username: 'x', password: 'xxxxxxxx', roles: ['admin'] }).expect(403);
      await gw.http().delete(`${gw.api}/admin/users/admin`).set('Authorization', auth).expect(403);
    });

    it('lets a user call the repository routes', async () => {
      await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('plain', 'plain-password-1')).expect(200);
    });
  });

  describe('admin user management', () => {
    it('creates, lists and deletes a user, never exposing password hashes', async () => {
      const created = await createUser('carol', 'carol-password-1', ['user', 'admin']).expect(201);
      expect(created.body).toEqual({ success: true, results: { username: 'carol', roles: ['user', 'admin'], groups: [], createdDate: expect.any(Number) } });

      const list = await gw.http().get(`${gw.api}/admin/users`).set('Authorization', adminAuth()).expect(200);
      const carol = list.body.results.find((u: { username: string }) => u.username === 'carol');
      expect(carol).toEqual(created.body.results);
      expect(JSON.stringify(list.body)).not.toMatch(/argon2|password/i);

      // carol is an admin now
      await gw.http().get(`${gw.api}/admin/users`).set('Authorization', basic('carol', 'carol-password-1')).expect(200);

      const deleted = await gw.http().delete(`${gw.api}/admin/users/carol`).set('Authorization', adminAuth()).expect(200);
      expect(deleted.body.results.username).toBe('carol');
      // Her credentials were verified (and cached) a moment ago: they must stop working at once.
      await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('carol', 'carol-password-1')).expect(401);
      await gw.http().delete(`${gw.api}/admin/users/carol`).set('Authorization', adminAuth()).expect(404);
    });

    it('refuses a duplicate user name with 409', async () => {
      await createUser('dup-user', 'dup-password-1', ['user']).expect(201);
      const res = await createUser('dup-user', 'other-password', ['user']).expect(409);
      expect(res.body.error.code).toBe('USER_EXISTS');
    });

    it.each([
      [{ password: 'long-enough-1', roles: ['user'] }, 'username'],
      [{ username: 'bad name!', password: 'long-enough-1', roles: ['user'] }, 'username'],
      [{ username: 'eve', password: 'short', roles: ['user'] }, 'password'],
      [{ username: 'eve', password: 'long-enough-1', roles: ['root'] }, 'roles'],
      [{ username: 'eve', password: 'long-enough-1', roles: [] }, 'roles'],
      [{ username: 'eve', password: 'long-enough-1' }, 'roles'],
    ])('answers 400 naming the bad parameter for %j', async (body, parameter) => {
      const res = await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send(body).expect(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_PARAMETER', parameter });
      expect(res.body.message).toContain(parameter);
    });

    it('does not let an admin delete their own account', async () => {
      const res = await gw.http().delete(`${gw.api}/admin/users/${ADMIN.username}`).set('Authorization', adminAuth()).expect(400);
      expect(res.body.error.parameter).toBe('username');
    });

    it('answers 404 naming the user for an unknown one', async () => {
      const res = await gw.http().delete(`${gw.api}/admin/users/ghost`).set('Authorization', adminAuth()).expect(404);
      expect(res.body.error).toMatchObject({ code: 'USER_NOT_FOUND', resource: 'user', id: 'ghost' });
    });
  });

  describe('failed-login lock-out', () => {
    beforeAll(async () => {
      await createUser('dave', 'dave-password-1', ['user']).expect(201);
    });

    it('locks one user at one address out after repeated failures, even for the right password', async () => {
      const from = (ip: string, password: string) =>
        gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('dave', password)).set('X-Forwarded-For', ip);

      await from('203.0.113.7', 'wrong-1').expect(401);
      await from('203.0.113.7', 'wrong-2').expect(401);
      await from('203.0.113.7', 'wrong-3').expect(401);

      const locked = await from('203.0.113.7', 'dave-password-1').expect(429);
      expect(locked.body.error.code).toBe('TOO_MANY_REQUESTS');
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(50);
      expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);

      // The same user from another address, and another user from the locked address, are unaffected.
      await from('198.51.100.1', 'dave-password-1').expect(200);
      await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', adminAuth()).set('X-Forwarded-For', '203.0.113.7').expect(200);
    });

    it('refuses recently verified (cached) credentials too while the pair is locked out', async () => {
      await createUser('gina', 'gina-password-1', ['user']).expect(201);
      const attempt = (password: string) =>
        gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('gina', password)).set('X-Forwarded-For', '192.0.2.99');
      await attempt('gina-password-1').expect(200); // now in the verification cache
      await attempt('bad-1').expect(401);
      await attempt('bad-2').expect(401);
      await attempt('bad-3').expect(401);
      await attempt('gina-password-1').expect(429);
    });

    it('resets the count after a successful login', async () => {
      await createUser('erin', 'erin-password-1', ['user']).expect(201);
      const attempt = (password: string) =>
        gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('erin', password)).set('X-Forwarded-For', '192.0.2.44');
      await attempt('bad-1').expect(401);
      await attempt('bad-2').expect(401);
      await attempt('erin-password-1').expect(200);
      await attempt('bad-3').expect(401);
      await attempt('bad-4').expect(401);
      await attempt('erin-password-1').expect(200);
    });
  });
});
