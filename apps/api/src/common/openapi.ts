import { applyDecorators, type Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { HeadersObject, ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

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

export const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (a malformed Authorization header or a URL whose escapes are not UTF-8 included); `error.parameter` names the parameter',
  401: 'Missing or wrong credentials (WWW-Authenticate: Basic)',
  403: 'The user lacks the required role',
  404: 'Unknown connector, item, file, link or user; `error.resource` names which',
  409: 'Conflict with the current state',
  410: 'The link has expired',
  413: 'Request body too large (GATEWAY_JSON_LIMIT_BYTES for JSON, GATEWAY_MAX_UPLOAD_BYTES for content); `error.limit` gives the limit',
  415: 'Unsupported media type (JSON routes take application/json); `error.parameter` is Content-Type',
  431: 'Request head (request line and headers) over 64 KiB (`REQUEST_HEAD_TOO_LARGE`); refused by the HTTP server before routing',
  429: 'Too many requests: failed logins for this user from this address (lock-out), or public download requests from this address; retry after the Retry-After seconds',
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

export type Schema = SchemaObject;

export interface EnvelopeOptions {
  isArray?: boolean;
  /** Default 200. */
  status?: number;
  description?: string;
  /** The job envelope's `message` beside `results`. */
  message?: boolean;
  headers?: HeadersObject;
}

/** Documents a `{ success, results }` answer whose results follow `results`. */
export function ApiEnvelope(results: Type<unknown> | Schema, options: EnvelopeOptions = {}) {
  const isModel = typeof results === 'function';
  let resultsSchema: SchemaObject | ReferenceObject = isModel ? { $ref: getSchemaPath(results) } : results;
  if (options.isArray) resultsSchema = { type: 'array', items: resultsSchema };
  const properties: Record<string, SchemaObject | ReferenceObject> = { success: { type: 'boolean', example: true }, results: resultsSchema };
  if (options.message) properties.message = { type: 'string', nullable: true };
  const decorators = [
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? 'Success',
      schema: { type: 'object', required: ['success', 'results'], properties },
      ...(options.headers ? { headers: options.headers } : {}),
    }),
  ];
  if (isModel) decorators.unshift(ApiExtraModels(results));
  return applyDecorators(...decorators);
}

const BINARY = { type: 'string', format: 'binary' } as const;
const text = (description: string) => ({ description, schema: { type: 'string' as const } });

/**
 * Documents a route answered by sendDownload(): the bytes with their
 * validators, the conditional and range answers, and the error answers.
 */
export function ApiFileDownload(description = 'The content') {
  const common: HeadersObject = {
    'Content-Type': text('Media type of the document (application/octet-stream when unknown)'),
    'Content-Length': { description: 'Bytes in this answer', schema: { type: 'integer' } },
    'Content-Disposition': text("attachment; filename=\"<ASCII fallback>\"; filename*=UTF-8''<percent-encoded name>"),
    'X-Content-Type-Options': text('nosniff'),
    'Content-Security-Policy': text("default-src 'none'; style-src 'unsafe-inline'; sandbox"),
    ETag: text('Strong validator, quoted; usable in If-None-Match and If-Range'),
    'Last-Modified': text('HTTP date; usable in If-Modified-Since and If-Range'),
    'Accept-Ranges': text('bytes'),
  };
  // Any media type: the document's own (application/zip for exports). Errors are JSON.
  const content = { '*/*': { schema: BINARY } };
  return applyDecorators(
    ApiResponse({ status: 200, description, headers: common, content }),
    ApiResponse({
      status: 206,
      description: 'One byte range (Range: bytes=first-last, bytes=first-, bytes=-suffix). Several ranges are answered with the whole content (200)',
      headers: { ...common, 'Content-Range': text('bytes first-last/size') },
      content,
    }),
    ApiResponse({ status: 304, description: 'Not modified: If-None-Match matched the ETag, or (without If-None-Match) If-Modified-Since is not older than Last-Modified' }),
    ApiResponse({
      status: 416,
      description: 'The range cannot be satisfied',
      headers: { 'Content-Range': text('bytes */size') },
      content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponseDto) } } },
    }),
  );
}
