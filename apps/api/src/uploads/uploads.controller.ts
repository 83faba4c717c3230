import { applyDecorators, Delete, Head, Options, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { ApiErrors } from '../common/openapi';
import { RawBody } from '../common/raw-body';
import { RouteFamily } from '../common/routes';
import { UploadsService } from './uploads.service';

/**
 * Every tus request but OPTIONS carries the protocol version. Not marked required: without it the answer is the
 * protocol's own 412 (tus 1.0), which OpenAPI tooling does not count as a refusal of a missing required header.
 */
const TUS_RESUMABLE = ApiHeader({ name: 'Tus-Resumable', required: false, description: 'The tus protocol version: 1.0.0 (required by tus: without it, 412)', schema: { type: 'string', enum: ['1.0.0'] } });

const UPLOAD_ID = ApiParam({ name: 'uploadId', description: 'The id at the end of the Location the creation answered', example: '3f0c6d1b2a9e8f47-9b0e2c51d7a84f3e96c1b0a2d4e6f809' });

const TUS_HEADER = (description: string) => ({ description, schema: { type: 'string' } });

/** Answers @tus/server writes itself: plain text, as tus clients expect, not the gateway's JSON. */
function TusErrors(...answers: Array<[number, string]>) {
  return applyDecorators(...answers.map(([status, description]) => ApiResponse({ status, description: `${description} (tus answer, text/plain)` })));
}

/**
 * tus 1.0 on /api/uploads (core, creation, creation-with-upload, termination, expiration, checksum),
 * behind HTTP Basic like every route. The protocol is @tus/server's; uploads/README.md describes it
 * with the gateway's additions (ownership, quota, expiry, turning an upload into a document).
 */
@RouteFamily('uploads', { tag: 'Resumable uploads (tus 1.0)', access: 'basic' })
export class UploadsController {
  constructor(private readonly uploads: UploadsService) {}

  @Options()
  @ApiOperation({ summary: 'tus capabilities', description: 'The tus OPTIONS answer: versions, extensions, largest upload and checksum algorithms.' })
  @ApiResponse({
    status: 204,
    description: 'Capabilities',
    headers: {
      'Tus-Version': TUS_HEADER('1.0.0'),
      'Tus-Extension': TUS_HEADER('creation,creation-with-upload,termination,expiration,checksum'),
      'Tus-Max-Size': TUS_HEADER('GATEWAY_MAX_UPLOAD_BYTES (absent when 0: no limit)'),
      'Tus-Checksum-Algorithm': TUS_HEADER('sha1,sha256'),
    },
  })
  capabilities(@Req() req: Request, @Res() res: Response, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.uploads.handle(req, res, user);
  }

  @Post()
  // The body of a creation-with-upload is upload content: no JSON/form parser, the upload limit applies.
  @RawBody()
  @TUS_RESUMABLE
  @ApiHeader({ name: 'Upload-Length', required: true, description: 'Size of the whole upload in bytes (creation-defer-length is not offered)', schema: { type: 'integer', minimum: 0 } })
  @ApiHeader({
    name: 'Upload-Metadata',
    required: false,
    description: "Comma-separated `<key> <base64 value>` pairs. `filename` (or `name`) and `filetype` (or `type`) name the document made from the upload; the key 'gateway-owner' is the server's",
  })
  @ApiHeader({ name: 'Upload-Checksum', required: false, description: 'With a body (creation-with-upload): `sha1|sha256 <base64 digest>` of that body' })
  @ApiHeader({ name: 'Content-Type', required: false, description: 'application/offset+octet-stream when the request carries the first bytes (creation-with-upload)' })
  @ApiOperation({
    summary: 'Create an upload (tus creation, creation-with-upload)',
    description:
      'Creates an upload of Upload-Length bytes owned by the caller; with a body, its first bytes too. The Location answered is the upload\'s URL ' +
      '(scheme and host as the client used them behind a proxy that TRUST_PROXY trusts). Counts against GATEWAY_UPLOAD_QUOTA_BYTES at once.',
  })
  @ApiResponse({
    status: 201,
    description: 'Created',
    headers: {
      Location: TUS_HEADER('The upload URL: …/api/uploads/{uploadId}'),
      'Upload-Offset': TUS_HEADER('With a body: the bytes stored'),
      'Upload-Expires': TUS_HEADER('When the unfinished upload expires (RFC 7231 date)'),
    },
  })
  @ApiErrors(413)
  @TusErrors([400, 'A tus header missing or malformed (the gateway\'s own refusals, such as an unknown query parameter, are its JSON error)'], [412, 'Tus-Resumable missing or not 1.0.0'], [413, 'Upload-Length beyond GATEWAY_MAX_UPLOAD_BYTES'], [460, 'The body does not match Upload-Checksum'])
  create(@Req() req: Request, @Res() res: Response, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.uploads.handle(req, res, user);
  }

  @Head(':uploadId')
  @UPLOAD_ID
  @TUS_RESUMABLE
  @ApiOperation({ summary: 'Upload offset (tus core)', description: 'Where to resume: the bytes stored so far. Only the upload\'s creator sees it; for anyone else it does not exist.' })
  @ApiResponse({
    status: 200,
    description: 'The upload\'s state, in headers',
    headers: {
      'Upload-Offset': TUS_HEADER('Bytes stored so far'),
      'Upload-Length': TUS_HEADER('Size of the whole upload'),
      'Upload-Metadata': TUS_HEADER('The metadata given at creation'),
      'Cache-Control': TUS_HEADER('no-store'),
    },
  })
  @ApiErrors(404)
  @TusErrors([400, 'A tus header missing or malformed (the gateway\'s own refusals, such as an unknown query parameter, are its JSON error)'], [410, 'The upload expired (GATEWAY_UPLOAD_EXPIRY_HOURS after its creation)'], [412, 'Tus-Resumable missing'])
  offset(@Param('uploadId') uploadId: string, @Req() req: Request, @Res() res: Response, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.uploads.handle(req, res, user, uploadId);
  }

  @Patch(':uploadId')
  @RawBody()
  @UPLOAD_ID
  @TUS_RESUMABLE
  @ApiHeader({ name: 'Upload-Offset', required: true, description: 'The offset HEAD gave (or the last PATCH answered)', schema: { type: 'integer', minimum: 0 } })
  @ApiHeader({ name: 'Content-Type', required: true, description: 'application/offset+octet-stream', schema: { type: 'string', enum: ['application/offset+octet-stream'] } })
  @ApiHeader({ name: 'Upload-Checksum', required: false, description: '`sha1|sha256 <base64 digest>` of this request\'s body; a mismatch stores none of it (460)' })
  @ApiOperation({
    summary: 'Append to an upload (tus core)',
    description:
      'Appends the body at Upload-Offset, streamed to the uploads folder. A cut connection keeps what arrived (without Upload-Checksum): HEAD tells where to go on. ' +
      'The finished upload becomes a document with POST /api/repo/{connectorId}/file?uploadId=… or PUT …/updateContent?uploadId=….',
  })
  @ApiResponse({
    status: 204,
    description: 'Stored',
    headers: { 'Upload-Offset': TUS_HEADER('Bytes stored now'), 'Upload-Expires': TUS_HEADER('While unfinished: when it expires') },
  })
  @ApiErrors(404, 413)
  @TusErrors([400, 'A tus header missing or malformed (the gateway\'s own refusals, such as an unknown query parameter, are its JSON error)'], 
    [409, 'Upload-Offset is not the stored offset'],
    [410, 'The upload expired'],
    [412, 'Tus-Resumable missing'],
    [413, 'The body goes beyond Upload-Length'],
    [415, 'Content-Type is not application/offset+octet-stream'],
    [460, 'The body does not match Upload-Checksum; nothing of it was stored'],
  )
  append(@Param('uploadId') uploadId: string, @Req() req: Request, @Res() res: Response, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.uploads.handle(req, res, user, uploadId);
  }

  @Delete(':uploadId')
  @UPLOAD_ID
  @TUS_RESUMABLE
  @ApiOperation({ summary: 'Terminate an upload (tus termination)', description: 'Removes the upload and its bytes, finished or not.' })
  @ApiResponse({ status: 204, description: 'Removed' })
  @ApiErrors(404)
  @TusErrors([400, 'A tus header missing or malformed (the gateway\'s own refusals, such as an unknown query parameter, are its JSON error)'], [412, 'Tus-Resumable missing'])
  terminate(@Param('uploadId') uploadId: string, @Req() req: Request, @Res() res: Response, @CurrentUser() user: AuthenticatedUser): Promise<void> {
    return this.uploads.handle(req, res, user, uploadId);
  }
}
