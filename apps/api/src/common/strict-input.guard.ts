import { Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
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

/** What a handler declares: its @Query() DTO or @Query('name') names, and its @Body() DTO. */
interface DeclaredInput {
  /** undefined: the handler takes the whole query as one untyped object (nothing to check against). */
  queryNames?: Set<string>;
  body?: Type<unknown>;
}

/**
 * Refuses what a route does not declare, before anything runs: a query parameter that is neither a property of
 * the handler's @Query() DTO nor a @Query('name') (400 naming it: `?dryRun=true` on a start must not start a
 * run that writes everything), and a key anywhere in the JSON body that its @Body() DTO does not declare (400
 * naming every one, as the configuration file does), and a form-encoded body where the route takes a DTO (415
 * naming Content-Type). The global validation pipe only strips such keys.
 * Put on a controller with @UseGuards.
 */
@Injectable()
export class StrictInputGuard implements CanActivate {
  private readonly declared = new WeakMap<object, DeclaredInput>();

  canActivate(context: ExecutionContext): boolean {
    const input = this.declaredInput(context);
    const req = context.switchToHttp().getRequest<Request>();
    if (input.queryNames) {
      const unknown = Object.keys(req.query ?? {}).filter((name) => !input.queryNames!.has(name));
      if (unknown.length > 0) {
        const known = input.queryNames.size > 0 ? `known: ${[...input.queryNames].join(', ')}` : 'this route takes none';
        throw new InvalidArgumentError(unknown[0], `Unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `'${n}'`).join(', ')} (${known})`);
      }
    }
    // A body DTO is nested JSON: a form body cannot say it, and would read as missing fields.
    if (input.body && req.is('application/x-www-form-urlencoded')) {
      throw new UnsupportedMediaTypeError(`Content-Type must be application/json (got '${req.headers['content-type']}'): this body is a nested JSON object`, {
        parameter: 'Content-Type',
      });
    }
    if (input.body && req.body && typeof req.body === 'object' && !Array.isArray(req.body)) {
      const errors = validateSync(plainToInstance(input.body, req.body as object) as object, { whitelist: true, forbidNonWhitelisted: true });
      const unknown = unknownKeys(errors, '');
      if (unknown.length > 0) {
        throw new InvalidArgumentError(unknown[0], `Unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k}'`).join(', ')} in the request body`);
      }
    }
    return true;
  }

  private declaredInput(context: ExecutionContext): DeclaredInput {
    const handler = context.getHandler();
    let input = this.declared.get(handler);
    if (input) return input;
    const controller: Type<unknown> = context.getClass();
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, RouteArgument>;
    const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, handler.name) ?? []) as Array<Type<unknown>>;
    input = {};
    for (const [key, arg] of Object.entries(args)) {
      const paramtype = Number(key.split(':')[0]) as RouteParamtypes;
      if (paramtype === RouteParamtypes.QUERY) {
        input.queryNames ??= new Set();
        if (typeof arg.data === 'string') input.queryNames.add(arg.data);
        else if (dtoClass(types[arg.index])) for (const name of dtoProperties(types[arg.index])) input.queryNames.add(name);
        else return this.remember(handler, { ...input, queryNames: undefined });
      } else if (paramtype === RouteParamtypes.BODY && arg.data === undefined && dtoClass(types[arg.index])) {
        input.body = types[arg.index];
      }
    }
    // A handler without any @Query() takes no query parameter.
    input.queryNames ??= new Set();
    return this.remember(handler, input);
  }

  private remember(handler: object, input: DeclaredInput): DeclaredInput {
    this.declared.set(handler, input);
    return input;
  }
}

function dtoClass(type: Type<unknown> | undefined): boolean {
  return type !== undefined && ![Object, String, Number, Boolean, Array].includes(type as never);
}

/** The properties class-validator knows of a DTO (its own and inherited). */
function dtoProperties(type: Type<unknown>): Set<string> {
  return new Set(getMetadataStorage().getTargetValidationMetadatas(type, '', true, false).map((m) => m.propertyName));
}

function unknownKeys(errors: ValidationError[], prefix: string): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const key = /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : prefix ? `${prefix}.${e.property}` : e.property;
    if (e.constraints && 'whitelistValidation' in e.constraints) out.push(key);
    if (e.children?.length) out.push(...unknownKeys(e.children, key));
  }
  return out;
}
