import { Delete, Get, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AccessAuditService } from '../audit/access-audit.service';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { sendDownload } from '../common/download';
import { ApiFileDownload } from '../common/openapi';
import { Route, RouteFamily } from '../common/routes';
import { CreateLinkQuery, DownloadLinkKeyDto, LinkKeyQuery, UserFileDto, UserFileIdQuery, UserFilesListDto, INTERNAL_CONNECTOR_ID } from './files.dto';
import { LinksService } from './links.service';
import { UserFilesService } from './user-files.service';

@RouteFamily('files', { tag: 'File service', access: 'basic' })
export class FilesController {
  constructor(
    private readonly userFiles: UserFilesService,
    private readonly links: LinksService,
    private readonly audit: AccessAuditService,
  ) {}

  @Get('user')
  @Route({
    summary: 'List user files',
    description: "The caller's files (export outputs) and download links. Other users' files and links are never shown.",
    results: UserFilesListDto,
  })
  list(@CurrentUser() user: AuthenticatedUser): Promise<UserFilesListDto> {
    return this.userFiles.list(user);
  }

  @Get('user/download')
  @ApiFileDownload('The file content')
  @Route({
    summary: 'Download user file',
    description:
      'Streams a complete user file, with Range, ETag/If-None-Match, Last-Modified and Content-Disposition as for repository files. ' +
      'An export still running answers 409 EXPORT_NOT_READY; a failed or stopped one 409 EXPORT_FAILED / EXPORT_STOPPED. ' +
      "Another user's file is 404.",
    errors: [400, 404, 409],
  })
  async download(@Query() query: UserFileIdQuery, @CurrentUser() user: AuthenticatedUser, @Req() req: Request, @Res() res: Response): Promise<void> {
    const source = await this.userFiles.download(user, query.id);
    return sendDownload(req, res, source, { onServed: this.audit.watch(req, source.identity) });
  }

  @Delete('user/delete')
  @Route({
    summary: 'Delete user file',
    description:
      'Removes the handle, its bytes and the internal links to it, and returns the handle as it was. A running export is stopped first. ' +
      'A download already under way finishes; later ones get 404.',
    results: UserFileDto,
    answer: 'The deleted file handle',
    errors: [400, 404],
  })
  delete(@Query() query: UserFileIdQuery, @CurrentUser() user: AuthenticatedUser): Promise<UserFileDto> {
    return this.userFiles.delete(user, query.id);
  }

  @Delete('user/stop')
  @Route({
    summary: 'Stop user file',
    description:
      'Stops a running export (parameter `id`: the file handle id): the work ends, the partial zip is removed, the handle stays with ' +
      'state `stopped`, and `results` is 0 (also when it had already stopped or failed; two stops at once both get 0). When the export ' +
      'completes before the stop takes effect, `results` is the size of the completed file. On an export that was already complete: ' +
      '409 EXPORT_COMPLETE, and nothing changes.',
    results: { type: 'integer', example: 0, description: 'The completed size, or 0 when the export was stopped' },
    errors: [400, 404, 409],
  })
  stop(@Query() query: UserFileIdQuery, @CurrentUser() user: AuthenticatedUser): Promise<number> {
    return this.userFiles.stop(user, query.id);
  }

  @Get('external/link')
  @Route({
    summary: 'Create external link',
    description:
      'A time-limited public download link. internal=true: `docId` is one of your user files (connectorId absent or ' +
      `'${INTERNAL_CONNECTOR_ID}'; fileName required when connectorId is absent), and the file is kept at least as long as the link. ` +
      'internal=false: `docId` is a document on `connectorId` (checked now, read at download time). `lifeSpan` in days, default 3. ' +
      'A link to a failed or stopped export is refused (409). A connector without content (a search connector) answers 501 naming `content`.',
    results: DownloadLinkKeyDto,
    answer: 'The link, identified by `key`',
    errors: [400, 404, 409, 501, 502, 503, 504],
  })
  createLink(@Query() query: CreateLinkQuery, @CurrentUser() user: AuthenticatedUser): Promise<DownloadLinkKeyDto> {
    return this.links.create(user, query);
  }

  @Delete('external/link')
  @Route({
    summary: 'Delete external link',
    description: "Deletes one of your links and returns it (with `key`). Another user's link is 404.",
    results: DownloadLinkKeyDto,
    answer: 'The deleted link',
    errors: [400, 404],
  })
  deleteLink(@Query() query: LinkKeyQuery, @CurrentUser() user: AuthenticatedUser): Promise<DownloadLinkKeyDto> {
    return this.links.delete(user, query.key);
  }
}
