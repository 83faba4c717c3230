import { RequestMethod, SetMetadata, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { Request } from 'express';

const RAW_BODY = 'gateway:raw-body';

/**
 * Marks a route whose body is document content of any media type (or a multipart body carrying it). The global JSON and form
 * parsers leave such bodies alone, or a .json or form-encoded document would be parsed (and
 * size-limited) instead of stored byte for byte.
 */
export const RawBody = (): MethodDecorator => SetMetadata(RAW_BODY, true);

interface RawRoute {
  method: string;
  pattern: RegExp;
}

/**
 * The routes marked @RawBody, as the body parsers see requests: before routing, by method and
 * path. The parsers are mounted before the routes exist, so the list is filled by collect()
 * once the application is initialised (no request is served before that).
 */
export class RawBodyRoutes {
  private routes: RawRoute[] = [];

  collect(app: INestApplication, globalPrefix: string): void {
    const routes: RawRoute[] = [];
    for (const module of app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as { prototype: Record<string, unknown> } | null;
        if (!controller) continue;
        const base = paths(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined);
        for (const name of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = controller.prototype[name];
          if (typeof handler !== 'function' || Reflect.getMetadata(RAW_BODY, handler) !== true) continue;
          const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
          for (const prefix of base) {
            for (const path of paths(Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined)) {
              routes.push({ method, pattern: routePattern([globalPrefix, prefix, path]) });
            }
          }
        }
      }
    }
    this.routes = routes;
  }

  matches(req: Request): boolean {
    return this.routes.some((r) => (r.method === req.method || r.method === 'ALL') && r.pattern.test(req.path));
  }
}

/** A @Controller or route decorator's path metadata: undefined, a path, or a list of paths. */
function paths(value: string | string[] | undefined): string[] {
  if (value === undefined) return [''];
  return Array.isArray(value) ? value : [value];
}

/** Express matches paths case-insensitively and with an optional trailing slash; so does this. */
export function routePattern(parts: string[]): RegExp {
  const segments = parts.flatMap((p) => p.split('/')).filter((s) => s !== '');
  const source = segments
    .map((s) => {
      if (s.startsWith(':') && /^:[A-Za-z0-9_]+$/.test(s)) return '[^/]+';
      if (!/^[A-Za-z0-9_.~-]+$/.test(s)) throw new Error(`@RawBody routes take plain segments and :params only (got '${s}')`);
      return s.replace(/\./g, '\\.');
    })
    .join('/');
  return new RegExp(`^/${source}/?$`, 'i');
}
