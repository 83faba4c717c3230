import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InvalidArgumentError, PermissionDeniedError, UnauthenticatedError } from '@gateway/connector-api';
import type { GatewayConfig } from '../config/gateway-config';
import { Public, Roles, type AuthenticatedUser } from './auth.decorators';
import { BasicAuthGuard, RolesGuard } from './auth.guards';
import { GatewayBasicStrategy } from './basic.strategy';
import type { UsersService } from './users.service';

class Routes {
  @Public()
  health(): void {}

  @Roles('admin')
  adminOnly(): void {}

  @Roles('admin', 'user')
  anyone(): void {}

  open(): void {}
}

interface FakeRequest {
  headers: Record<string, string | undefined>;
  ip?: string;
  user?: AuthenticatedUser;
}

/** What Nest hands a guard for one request to one handler of Routes. */
function contextFor(handler: keyof Routes, req: FakeRequest): ExecutionContext {
  return {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('RolesGuard', () => {
  const guard = new RolesGuard(new Reflector());
  const user = (...roles: AuthenticatedUser['roles']): FakeRequest => ({ headers: {}, user: { username: 'u', roles } });

  it('lets any caller through a route that names no role', () => {
    expect(guard.canActivate(contextFor('open', { headers: {} }))).toBe(true);
  });

  it('lets a caller through with one of the roles the route names', () => {
    expect(guard.canActivate(contextFor('adminOnly', user('user', 'admin')))).toBe(true);
    expect(guard.canActivate(contextFor('anyone', user('user')))).toBe(true);
  });

  it('refuses a caller without them, naming the roles', () => {
    expect(() => guard.canActivate(contextFor('adminOnly', user('user')))).toThrow(PermissionDeniedError);
    expect(() => guard.canActivate(contextFor('adminOnly', user('user')))).toThrow('This operation requires the role admin');
    expect(() => guard.canActivate(contextFor('adminOnly', { headers: {} }))).toThrow(PermissionDeniedError);
  });
});

describe('BasicAuthGuard', () => {
  const alice: AuthenticatedUser = { username: 'alice', roles: ['user'] };
  let seen: Array<[string, string, string]>;
  /** UsersService's fast path: alice with 'right' is remembered. */
  const users = {
    verifyCached(username: string, password: string, address: string) {
      seen.push([username, password, address]);
      return username === 'alice' && password === 'right:with:colons' ? alice : undefined;
    },
    async verify(username: string, password: string, address: string) {
      verified.push([username, password, address]);
      return username === 'alice' && password === 'first-sight' ? alice : undefined;
    },
  } as unknown as UsersService;
  let verified: Array<[string, string, string]>;
  // Registers the 'basic' strategy with passport, as the auth module does.
  new GatewayBasicStrategy(users);
  const guardWith = (auth: Partial<GatewayConfig['auth']> = {}) =>
    new BasicAuthGuard(new Reflector(), users, { auth: { disabled: false, ...auth } } as GatewayConfig);

  beforeEach(() => {
    seen = [];
    verified = [];
  });

  it('lets anyone through a public route without looking at credentials', () => {
    const req: FakeRequest = { headers: {} };
    expect(guardWith().canActivate(contextFor('health', req))).toBe(true);
    expect(req.user).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it('makes every caller an anonymous admin when authentication is off', () => {
    const req: FakeRequest = { headers: {} };
    expect(guardWith({ disabled: true }).canActivate(contextFor('open', req))).toBe(true);
    expect(req.user).toEqual({ username: 'anonymous', roles: ['admin', 'user'] });
  });

  it('accepts remembered credentials at once, splitting at the first colon and keying by the client address', () => {
    const req: FakeRequest = { headers: { authorization: basic('alice', 'right:with:colons') }, ip: '10.1.2.3' };
    expect(guardWith().canActivate(contextFor('open', req))).toBe(true);
    expect(req.user).toEqual(alice);
    expect(seen).toEqual([['alice', 'right:with:colons', '10.1.2.3']]);
  });

  it('reads the scheme case-insensitively and falls back to "unknown" without an address', () => {
    const req: FakeRequest = { headers: { authorization: basic('alice', 'right:with:colons').replace('Basic', 'bAsIc') } };
    expect(guardWith().canActivate(contextFor('open', req))).toBe(true);
    expect(seen).toEqual([['alice', 'right:with:colons', 'unknown']]);
  });

  it('hands credentials it has not seen to the strategy, which verifies them', async () => {
    const req: FakeRequest = { headers: { authorization: basic('alice', 'first-sight') }, ip: '10.1.2.3' };
    await expect(guardWith().canActivate(contextFor('open', req))).resolves.toBe(true);
    expect(req.user).toEqual(alice);
    expect(verified).toEqual([['alice', 'first-sight', '10.1.2.3']]);
  });

  it('answers 401 for wrong credentials and for none', async () => {
    await expect(guardWith().canActivate(contextFor('open', { headers: { authorization: basic('alice', 'wrong') } }))).rejects.toThrow(UnauthenticatedError);
    await expect(guardWith().canActivate(contextFor('open', { headers: {} }))).rejects.toThrow(UnauthenticatedError);
  });

  it.each([
    ['another scheme', 'Bearer abc', UnauthenticatedError],
    ['no user name', basic('', 'right:with:colons'), UnauthenticatedError],
    ['no colon', `Basic ${Buffer.from('alice').toString('base64')}`, InvalidArgumentError],
    ['text after the token', `${basic('alice', 'right:with:colons')} x`, UnauthenticatedError],
  ])('does not take the fast path for %s', async (_what, authorization, error) => {
    await expect(guardWith().canActivate(contextFor('open', { headers: { authorization } }))).rejects.toThrow(error);
    expect(seen).toEqual([]);
  });

  describe('handleRequest', () => {
    const context = contextFor('open', { headers: {} });

    it('answers the user the strategy found', () => {
      expect(guardWith().handleRequest(null, alice, undefined, context)).toBe(alice);
    });

    it('passes a lock-out or other error on as it is', () => {
      const error = new Error('locked');
      expect(() => guardWith().handleRequest(error, alice, undefined, context)).toThrow(error);
    });

    it('answers 400 naming Authorization for a malformed header, and 401 for missing or wrong credentials', () => {
      expect(() => guardWith().handleRequest(null, false, undefined, context, 400)).toThrow(InvalidArgumentError);
      expect(() => guardWith().handleRequest(null, false, undefined, context, 400)).toThrow(
        'Malformed Authorization header: expected Basic base64(user:password)',
      );
      expect(() => guardWith().handleRequest(null, false, undefined, context)).toThrow(UnauthenticatedError);
    });
  });
});
