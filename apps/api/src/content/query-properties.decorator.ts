import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/**
 * The whole query string as parsed, for routes that take free-form
 * `<property>=<value>` parameters beside their DTO (whose whitelist strips
 * unknown names). The service picks the properties out and validates them.
 */
export const RawQuery = createParamDecorator((_data: unknown, ctx: ExecutionContext): Record<string, unknown> => {
  return { ...(ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown>) };
});
