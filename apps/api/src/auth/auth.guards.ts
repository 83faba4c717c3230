import { ExecutionContext, Inject, Injectable, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { InvalidArgumentError, PermissionDeniedError, UnauthenticatedError } from '@gateway/errors';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { Role } from '../config/config.schema';
import type { Request } from 'express';
import { IS_PUBLIC, REQUIRED_ROLES, type AuthenticatedUser } from './auth.decorators';
import { UsersService } from './users.service';

const BASIC = /^Basic ([A-Za-z0-9+/]+={0,2})$/i;

/** Well-formed Basic credentials, or undefined (the strategy then decides). */
function parseBasic(header: string | undefined): { username: string; password: string } | undefined {
  const m = header ? BASIC.exec(header) : null;
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Basic authentication on every route not marked @Public(). */
@Injectable()
export class BasicAuthGuard extends AuthGuard('basic') {
  constructor(
    private readonly reflector: Reflector,
    private readonly users: UsersService,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (this.config.auth.disabled) {
      req.user = { username: 'anonymous', roles: ['admin', 'user'] } satisfies AuthenticatedUser;
      return true;
    }
    // Credentials verified within the cache TTL skip the passport round trip;
    // everything else (first sight, wrong, malformed) goes through the strategy.
    const credentials = parseBasic(req.headers.authorization);
    if (credentials) {
      const user = this.users.verifyCached(credentials.username, credentials.password, req.ip ?? 'unknown');
      if (user) {
        req.user = user;
        return true;
      }
    }
    return super.canActivate(context);
  }

  override handleRequest<TUser = AuthenticatedUser>(err: unknown, user: TUser | false, _info: unknown, _ctx: ExecutionContext, status?: number): TUser {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- passport's strategy error, passed on as it came (the exception filter maps it)
    if (err) throw err;
    if (status === 400) {
      throw new InvalidArgumentError('Authorization', 'Malformed Authorization header: expected Basic base64(user:password)', 'MALFORMED_CREDENTIALS');
    }
    if (!user) throw new UnauthenticatedError('Missing or invalid credentials');
    return user;
  }
}

@Injectable()
export class RolesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const required = this.reflector.getAllAndOverride<Role[] | undefined>(REQUIRED_ROLES, [context.getHandler(), context.getClass()]);
    if (!required?.length) return true;
    const user = context.switchToHttp().getRequest<{ user?: AuthenticatedUser }>().user;
    if (user && required.some((r) => user.roles.includes(r))) return true;
    throw new PermissionDeniedError(`This operation requires the role ${required.join(' or ')}`, { requiredRoles: required });
  }
}
