import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Role } from '../config/config.schema';

export interface AuthenticatedUser {
  username: string;
  roles: Role[];
  /** The user's groups: principals besides the user name for permission-trimmed search (absent: none). */
  groups?: string[];
}

export const IS_PUBLIC = 'gateway:isPublic';
export const REQUIRED_ROLES = 'gateway:roles';

/** The route needs no credentials (public downloads, health). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** The caller needs at least one of these roles. */
export const Roles = (...roles: Role[]) => SetMetadata(REQUIRED_ROLES, roles);

export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthenticatedUser => {
  return ctx.switchToHttp().getRequest<{ user: AuthenticatedUser }>().user;
});
