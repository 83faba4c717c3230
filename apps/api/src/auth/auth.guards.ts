import { ExecutionContext, Inject, Injectable, type CanActivate } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { InvalidArgumentError, PermissionDeniedError, UnauthenticatedError } from '@gateway/connector-api';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import type { Role } from '../config/config.schema';
import { IS_PUBLIC, REQUIRED_ROLES, type AuthenticatedUser } from './auth.decorators';

/** Basic authentication on every route not marked @Public(). */
@Injectable()
export class BasicAuthGuard extends AuthGuard('basic') {
  constructor(
    private readonly reflector: Reflector,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext) {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]);
    if (isPublic) return true;
    if (this.config.auth.disabled) {
      context.switchToHttp().getRequest().user = { username: 'anonymous', roles: ['admin', 'user'] } satisfies AuthenticatedUser;
      return true;
    }
    return super.canActivate(context);
  }

  override handleRequest<TUser = AuthenticatedUser>(err: unknown, user: TUser | false, _info: unknown, _ctx: ExecutionContext, status?: number): TUser {
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
    const user = context.switchToHttp().getRequest().user as AuthenticatedUser | undefined;
    if (user && required.some((r) => user.roles.includes(r))) return true;
    throw new PermissionDeniedError(`This operation requires the role ${required.join(' or ')}`, { requiredRoles: required });
  }
}
