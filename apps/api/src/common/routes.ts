import { applyDecorators, Controller, HttpCode, UseGuards, type Type } from '@nestjs/common';
import { ApiBasicAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public, Roles } from '../auth/auth.decorators';
import type { Role } from '../config/config.schema';
import { ApiEnvelope, ApiErrors, type EnvelopeOptions, type Schema } from './openapi';
import { StrictInputGuard } from './strict-input.guard';

export interface RouteFamilyOptions {
  /** OpenAPI tag the family's routes are listed under. */
  tag: string;
  /** 'public' routes need no credentials; the others take HTTP Basic (401 without it). */
  access: 'basic' | 'public';
  /** Roles every route of the family needs (403 without one of them). */
  roles?: Role[];
  /** Error answers every route of the family can give, beside 401/403. */
  errors?: number[];
}

/**
 * A controller: its path, and what all its routes share — authentication, roles, OpenAPI tag and
 * the common error answers — in one decorator. Every route refuses the query parameters and body keys
 * it does not declare (StrictInputGuard; it runs after the global authentication and role guards).
 */
export function RouteFamily(path: string, family: RouteFamilyOptions): ClassDecorator {
  const auth = family.access === 'public' ? [Public()] : [ApiBasicAuth()];
  const errors = [...(family.access === 'basic' ? [401] : []), ...(family.roles ? [403] : []), ...(family.errors ?? [])];
  return applyDecorators(
    Controller(path),
    UseGuards(StrictInputGuard),
    ApiTags(family.tag),
    ...auth,
    ...(family.roles ? [Roles(...family.roles)] : []),
    ...(errors.length > 0 ? [ApiErrors(...errors)] : []),
  );
}

export interface RouteOptions {
  summary: string;
  description?: string;
  /**
   * The `results` of the `{ success, results }` answer. The answer's status (default 200) is both
   * documented and sent. Routes that write their own answer (downloads) leave it out.
   */
  results?: Type<unknown> | Schema;
  isArray?: boolean;
  status?: number;
  /** The job envelope's `message` beside `results`. */
  message?: boolean;
  /** Description of the success answer (default 'Success'). */
  answer?: string;
  headers?: EnvelopeOptions['headers'];
  /** Error answers of this route beside the family's. */
  errors?: number[];
  /** Roles this route needs beyond its family's (403 without one of them). */
  roles?: Role[];
}

/** One route's OpenAPI operation, success envelope and status, error answers and roles in one decorator. */
export function Route(route: RouteOptions): MethodDecorator {
  const { summary, description, results, roles, answer, errors: routeErrors = [], ...envelope } = route;
  const errors = [...(roles ? [403] : []), ...routeErrors];
  return applyDecorators(
    ApiOperation(description === undefined ? { summary } : { summary, description }),
    ...(results === undefined ? [] : [ApiEnvelope(results, { ...envelope, description: answer }), HttpCode(envelope.status ?? 200)]),
    ...(errors.length > 0 ? [ApiErrors(...errors)] : []),
    ...(roles ? [Roles(...roles)] : []),
  );
}
