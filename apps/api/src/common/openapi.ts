import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

export class ErrorDetailDto {
  @ApiProperty({ example: 'INVALID_PARAMETER', description: 'Stable machine-readable error code' })
  code!: string;

  @ApiProperty({ required: false, description: 'The offending parameter, for 400 answers' })
  parameter?: string;

  @ApiProperty({ required: false, description: 'The unsupported operation, for 501 answers' })
  capability?: string;
}

export class ErrorResponseDto {
  @ApiProperty({ example: false })
  success!: boolean;

  @ApiProperty({ example: "Invalid parameter 'id': must be a string" })
  message!: string;

  @ApiProperty({ type: ErrorDetailDto })
  error!: ErrorDetailDto;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; `error.parameter` names the parameter',
  401: 'Missing or wrong credentials (WWW-Authenticate: Basic)',
  403: 'The user lacks the required role',
  404: 'Unknown connector, item, file, link or user; `error.resource` names which',
  409: 'Conflict with the current state',
  410: 'The link has expired',
  413: 'Request body too large',
  415: 'Unsupported media type',
  429: 'Too many failed logins; retry after the Retry-After seconds',
  501: 'Operation not supported by this connector kind; `error.capability` names it',
  502: 'The repository or engine answered with an error (its message is passed on)',
  503: 'The repository or engine is unavailable',
  504: 'The repository or engine timed out',
};

/** Documents the error answers a route can give, all with the same body shape. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: ERROR_DESCRIPTIONS[status], type: ErrorResponseDto })),
  );
}

type Schema = SchemaObject;

/** Documents a `{ success, results }` answer whose results follow `results`. */
export function ApiEnvelope(results: Type<unknown> | Schema, options: { isArray?: boolean; status?: number; description?: string; message?: boolean } = {}) {
  const isModel = typeof results === 'function';
  let resultsSchema: SchemaObject | ReferenceObject = isModel ? { $ref: getSchemaPath(results as Type<unknown>) } : (results as Schema);
  if (options.isArray) resultsSchema = { type: 'array', items: resultsSchema };
  const properties: Record<string, SchemaObject | ReferenceObject> = { success: { type: 'boolean', example: true }, results: resultsSchema };
  if (options.message) properties.message = { type: 'string', nullable: true };
  const decorators = [
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: { type: 'object', required: ['success', 'results'], properties },
    }),
  ];
  if (isModel) decorators.unshift(ApiExtraModels(results as Type<unknown>));
  return applyDecorators(...decorators);
}
