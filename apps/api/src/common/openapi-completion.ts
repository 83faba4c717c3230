import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { OperationObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { ERROR_DESCRIPTIONS, ErrorResponseDto } from './openapi';

/** A DTO or controller class, as Nest's and class-validator's metadata key it. */
type Class = (abstract new (...args: never[]) => unknown) & { prototype: Record<string, unknown> };

/**
 * Completes the OpenAPI document from what the code already enforces, so the two cannot drift
 * (issue 16, defect 10; Schemathesis checks the document against the running gateway):
 *
 * - the constraints of the class-validator decorators (minLength, maxLength, pattern, minimum,
 *   maximum, minItems, maxItems, enum, integer) on body schemas and query parameters, where the
 *   @ApiProperty does not state them already;
 * - the error answers every route of a kind can give: 400 (a malformed Authorization header, a
 *   URL that is not UTF-8), 401 and 429 (login lock-out) on authenticated routes; 413 and 415 on
 *   routes that take a JSON body; 431 everywhere (Node's limit on the request head);
 * - `nullable` on optional body properties (class-validator's @IsOptional treats null as absent).
 */
export function completeOpenApi(document: OpenAPIObject, app: INestApplication): void {
  addSchemaConstraints(document);
  addQueryConstraints(document, app);
  addCommonErrors(document);
}

const MEDIA_JSON = 'application/json';

function addCommonErrors(document: OpenAPIObject): void {
  const errorRef = { $ref: `#/components/schemas/${ErrorResponseDto.name}` };
  for (const item of Object.values(document.paths)) {
    for (const op of operations(item)) {
      // Node answers it before any middleware runs: no body, so no content is documented.
      op.responses['431'] ??= { description: ERROR_DESCRIPTIONS[431] };
      const add = (status: number) => {
        op.responses[String(status)] ??= { description: ERROR_DESCRIPTIONS[status], content: { [MEDIA_JSON]: { schema: errorRef } } } satisfies ResponseObject;
      };
      if (op.security?.some((s) => 'basic' in s)) [400, 401, 429].forEach(add);
      const body = op.requestBody as { content?: Record<string, unknown> } | undefined;
      if (body?.content?.[MEDIA_JSON]) [400, 413, 415].forEach(add);
    }
  }
}

function operations(item: object): OperationObject[] {
  return (['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const)
    .map((m) => (item as Record<string, OperationObject | undefined>)[m])
    .filter((op): op is OperationObject => op !== undefined);
}

function addSchemaConstraints(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const byName = new Map<string, Class>();
  const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Class, ValidationMetadata[]> };
  for (const target of storage.validationMetadatas.keys()) byName.set(target.name, target);
  for (const [name, schema] of Object.entries(schemas)) {
    const target = byName.get(name);
    const properties = (schema as SchemaObject).properties;
    if (!target || !properties) continue;
    for (const [property, propertySchema] of Object.entries(properties)) {
      const constraints = constraintsOf(target, property);
      applyConstraints(propertySchema, constraints);
      // @IsOptional takes null for absent: say so, or a validator would call `null` a violation we accept.
      if (constraints.some((m) => m.type === 'conditionalValidation') && !('$ref' in propertySchema)) propertySchema.nullable ??= true;
    }
  }
}

function addQueryConstraints(document: OpenAPIObject, app: INestApplication): void {
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Class | null;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (typeof handler !== 'function' || name === 'constructor') continue;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const dto = queryDto(controller, name);
        if (!dto) continue;
        const route = ['api', base, String(Reflect.getMetadata(PATH_METADATA, handler) ?? '')]
          .flatMap((p) => p.split('/'))
          .filter((s) => s !== '')
          .map((s) => s.replace(/^:(.+)$/, '{$1}'))
          .join('/');
        const op = (document.paths[`/${route}`] as Record<string, OperationObject | undefined> | undefined)?.[RequestMethod[method].toLowerCase()];
        for (const parameter of op?.parameters ?? []) {
          if (!('in' in parameter) || parameter.in !== 'query' || !parameter.schema) continue;
          applyConstraints(parameter.schema, constraintsOf(dto, parameter.name));
        }
      }
    }
  }
}

/** The class of the handler's whole-query argument (@Query() dto), if any. */
function queryDto(controller: Class, handler: string): Class | undefined {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<string, { index: number; data?: unknown }>;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, handler) ?? []) as unknown[];
  for (const [key, arg] of Object.entries(args)) {
    if (key.split(':')[0] !== String(RouteParamtypes.QUERY) || arg.data !== undefined) continue;
    const type = types[arg.index];
    if (typeof type === 'function' && type !== Object) return type as Class;
  }
  return undefined;
}

function constraintsOf(target: Class, property: string): ValidationMetadata[] {
  return getMetadataStorage()
    .getTargetValidationMetadatas(target, '', true, false)
    .filter((m) => m.propertyName === property);
}

function applyConstraints(schema: SchemaObject | ReferenceObject, metadata: ValidationMetadata[]): void {
  if ('$ref' in schema) return;
  for (const m of metadata) {
    const s = m.each ? schema.items : schema;
    if (!s || '$ref' in s) continue;
    const [a, b] = (m.constraints ?? []) as unknown[];
    switch (m.name) {
      case 'isNotEmpty':
        if (s.type === 'string') s.minLength ??= 1;
        break;
      case 'minLength':
        s.minLength ??= Number(a);
        break;
      case 'maxLength':
        s.maxLength ??= Number(a);
        break;
      case 'length':
        s.minLength ??= Number(a);
        if (b !== undefined) s.maxLength ??= Number(b);
        break;
      case 'min':
        s.minimum ??= Number(a);
        break;
      case 'max':
        s.maximum ??= Number(a);
        break;
      case 'isInt':
        if (s.type === 'number' || s.type === undefined) s.type = 'integer';
        break;
      case 'arrayNotEmpty':
        s.minItems ??= 1;
        break;
      case 'arrayMinSize':
        s.minItems ??= Number(a);
        break;
      case 'arrayMaxSize':
        s.maxItems ??= Number(a);
        break;
      case 'isIn':
        if (Array.isArray(a) && a.every((v) => typeof v === 'string' || typeof v === 'number')) s.enum ??= a;
        break;
      case 'matches': {
        // Only flag-free patterns mean the same to every JSON-Schema validator.
        const pattern = a instanceof RegExp ? (a.flags.replace(/[gu]/g, '') === '' ? a.source : undefined) : typeof a === 'string' && !b ? a : undefined;
        if (pattern !== undefined) s.pattern ??= pattern;
        break;
      }
    }
  }
}
