import { Body, createParamDecorator, Get, Post, Req, Res, type ExecutionContext } from '@nestjs/common';
import { ApiProduces, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AccessAuditService } from '../audit/access-audit.service';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { sendDownload } from '../common/download';
import { Route, RouteFamily } from '../common/routes';
import { AcceptsQuery } from '../common/strict-input.guard';
import { BatchRequestDto, DownloadLinkDto } from './files.dto';
import { ExportsService } from './exports.service';

/** The whole query string as parsed: the GET form's parameter names are numbered, so no DTO can list them. */
const BatchQuery = createParamDecorator((_data: unknown, ctx: ExecutionContext): Record<string, unknown> => ({
  ...(ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown>),
}));

/**
 * The batch calls live under repo/ beside the content service's
 * `repo/:connectorId/...` routes; FilesModule is imported before
 * ContentModule so these literal routes are registered (and matched) first.
 */
@RouteFamily('repo', { tag: 'Content service', access: 'basic' })
export class BatchController {
  constructor(
    private readonly exports: ExportsService,
    private readonly audit: AccessAuditService,
  ) {}

  @Post('batch')
  @Route({
    summary: 'Batch (current form)',
    description:
      'Starts an export: a user file (type `batch`, ready=false) filled in the background by streaming each document into a zip, ' +
      'and answers at once (202) with a download link to it: internal, `fileName` the zip name, `id` the link key (for the ready check ' +
      'and public download), `docId` the file id (for download, delete and stop). Entries keep their order; names are sanitised and made ' +
      'unique. A failing entry never fails the batch: its error is a line of errors.txt inside the zip. Entries are stored uncompressed ' +
      'unless GATEWAY_BATCH_ZIP_LEVEL says otherwise.',
    results: DownloadLinkDto,
    status: 202,
    answer: 'The export started; the link to its zip',
    errors: [400, 503],
  })
  startBatch(@Body() body: BatchRequestDto, @CurrentUser() user: AuthenticatedUser, @Req() req: Request): Promise<DownloadLinkDto> {
    return this.exports.startBatch(user, body, this.audit.reader(req));
  }

  @Get('__BATCH__/file')
  @Route({
    summary: 'Batch (older form)',
    description:
      'Streams a zip of the documents straight into the answer (chunked: no Content-Length, no Range), in ascending x. For each integer x: ' +
      '`id<x>` (document id), `conn<x>` (connector id), optional `fname<x>` (name in the zip; default the document name). The bracketed ' +
      '`id[x]`, `conn[x]`, `fname[x]` work too. Missing or malformed parameters are 400 before anything is sent; failing entries go to ' +
      'errors.txt inside the zip.',
    errors: [400],
  })
  @ApiQuery({
    name: 'parameters',
    required: true,
    style: 'form',
    explode: true,
    schema: { type: 'object', additionalProperties: { type: 'string' }, example: { id0: 'fs-YS50eHQ', conn0: 'fs', fname0: 'a.txt', id1: 'fs-Yi50eHQ', conn1: 'fs' } },
    description: '`id<x>`, `conn<x>`, `fname<x>` (or `id[x]`, `conn[x]`, `fname[x]`) for each x; the parameter is not literally called `parameters`',
  })
  @AcceptsQuery({ pattern: /^(id|conn|fname)(\d{1,9}|\[\d{1,9}\])?$/, patternDescription: 'id<x>, conn<x>, fname<x> (or id[x], conn[x], fname[x])' })
  @ApiProduces('application/zip', 'application/json')
  @ApiResponse({ status: 200, description: 'The zip', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } })
  async legacyBatch(@BatchQuery() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return sendDownload(req, res, this.exports.streamBatch(query, this.audit.reader(req)));
  }
}
