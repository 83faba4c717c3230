import { Injectable, SetMetadata, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import type { Request } from 'express';
import { InvalidArgumentError, UnsupportedMediaTypeError } from '@gateway/errors';

interface RouteArgument {
  index: number;
  data?: unknown;
}

/**
 * Query names a handler reads through a decorator of its own (the raw query string, free `<property>=<value>`
 * names, numbered names), which no @Query() DTO can list: exact `names`, and names matching `pattern`, which
 * `patternDescription` explains in the 400.
 */
export interface AcceptedQuery {
  names?: readonly string[];
  pattern?: RegExp;
  patternDescription?: string;
}

const ACCEPTED_QUERY = 'gateway:acceptedQuery';

/** Declares the query names a handler reads without a @Query() DTO (see AcceptedQuery); every other name stays a 400. */
export const AcceptsQuery = (accepted: AcceptedQuery): MethodDecorator => SetMetadata(ACCEPTED_QUERY, accepted);

/** What a handler declares: its query names and pattern, and its @Body() DTO. */
interface DeclaredInput {
  queryNames: Set<string>;
  pattern?: RegExp;
  patternDescription?: string;
  body?: Type<unknown>;
}

/**
 * Refuses what a route does not declare, before anything runs: a query parameter that is neither a property of
 * the handler's @Query() DTO, a @Query('name'), nor accepted by its @AcceptsQuery (400 naming it: `?dryRun=true`
 * on a start must not start a run that writes everything), and a key anywhere in the JSON body that its @Body()
 * DTO does not declare (400 naming every one, as the configuration file does), and a form-encoded body where the
 * route takes a DTO (415 naming Content-Type). The global validation pipe only strips such keys.
 * On every route: RouteFamily puts it on each controller, after the authentication and role guards (a caller
 * without credentials gets 401, not a lesson in parameter names). It fails closed: a handler that takes the whole
 * query untyped, or reads it through a decorator of its own, accepts no name until @AcceptsQuery declares them.
 */
@Injectable()
export class StrictInputGuard implements CanActivate {
  private readonly declared = new WeakMap<object, DeclaredInput>();

  canActivate(context: ExecutionContext): boolean {
    const input = this.declaredInput(context);
    const req = context.switchToHttp().getRequest<Request>();
    const unknown = Object.keys(req.query ?? {}).filter((name) => !input.queryNames.has(name) && !input.pattern?.test(name));
    if (unknown.length > 0) throw new InvalidArgumentError(unknown[0], `Unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')} (${knownText(input)})`);
    // A body DTO is nested JSON: a form body cannot say it, and would read as missing fields.
    if (input.body && req.is('application/x-www-form-urlencoded')) {
      throw new UnsupportedMediaTypeError(`Content-Type must be application/json (got '${req.headers['content-type']}'): this body is a nested JSON object`, {
        parameter: 'Content-Type',
      });
    }
    if (input.body && req.body && typeof req.body === 'object' && !Array.isArray(req.body)) {
      const errors = validateSync(plainToInstance(input.body, req.body as object) as object, { whitelist: true, forbidNonWhitelisted: true });
      const unknownKeys = unknownBodyKeys(errors, '');
      if (unknownKeys.length > 0) {
        throw new InvalidArgumentError(unknownKeys[0], `Unknown key${unknownKeys.length > 1 ? 's' : ''} ${unknownKeys.map((k) => `'${k}'`).join(', ')} in the request body`);
      }
    }
    return true;
  }

  private declaredInput(context: ExecutionContext): DeclaredInput {
    const handler = context.getHandler();
    const cached = this.declared.get(handler);
    if (cached) return cached;
    const input = declaredInputOf(context.getClass(), handler.name);
    this.declared.set(handler, input);
    return input;
  }
}

/** What the handler `name` of `controller` declares (exported for the test that checks every route of the app). */
export function declaredInputOf(controller: Type<unknown>, name: string): DeclaredInput {
  const handler = (controller.prototype as Record<string, object>)[name];
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<string, RouteArgument>;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, name) ?? []) as Array<Type<unknown>>;
  const accepted = (Reflect.getMetadata(ACCEPTED_QUERY, handler) ?? {}) as AcceptedQuery;
  const input: DeclaredInput = { queryNames: new Set(accepted.names), pattern: accepted.pattern, patternDescription: accepted.patternDescription };
  for (const [key, arg] of Object.entries(args)) {
    const paramtype = Number(key.split(':')[0]) as RouteParamtypes;
    if (paramtype === RouteParamtypes.QUERY) {
      if (typeof arg.data === 'string') input.queryNames.add(arg.data);
      // An untyped whole query declares nothing: fail closed.
      else if (dtoClass(types[arg.index])) for (const property of dtoProperties(types[arg.index])) input.queryNames.add(property);
    } else if (paramtype === RouteParamtypes.BODY && arg.data === undefined && dtoClass(types[arg.index])) {
      input.body = types[arg.index];
    }
  }
  return input;
}

function knownText(input: DeclaredInput): string {
  const names = [...input.queryNames];
  if (input.pattern) return `known: ${[...names, input.patternDescription ?? `names matching ${String(input.pattern)}`].join(', ')}`;
  return names.length > 0 ? `known: ${names.join(', ')}` : 'this route takes none';
}

function dtoClass(type: Type<unknown> | undefined): boolean {
  return type !== undefined && ![Object, String, Number, Boolean, Array].includes(type as never);
}

/** The properties class-validator knows of a DTO (its own and inherited). */
function dtoProperties(type: Type<unknown>): Set<string> {
  return new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).map((m) => m.propertyName));
}

function unknownBodyKeys(errors: ValidationError[], prefix: string): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const key = /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints && 'whitelistValidation' in e.constraints) out.push(key);
    if (e.children?.length) out.push(...unknownBodyKeys(e.children, key));
  }
  return out;
}
