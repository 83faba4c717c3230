import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/auth.decorators';
import { sendDownload } from '../common/download';
import { ApiEnvelope, ApiErrors, ApiFileDownload } from '../common/openapi';
import { LinkKeyQuery } from './files.dto';
import { LinksService } from './links.service';

/** No credentials: whoever holds a valid key may download. */
@ApiTags('File service')
@Public()
@Controller('public/download')
export class PublicDownloadController {
  constructor(private readonly links: LinksService) {}

  @Get('ready')
  @ApiOperation({
    summary: 'Public download ready check',
    description:
      'No credentials. true when a download would deliver now (an external link, or a complete export); false while the export runs. ' +
      '404 unknown key; 410 expired link (LINK_EXPIRED) or an export that failed or was stopped (EXPORT_FAILED / EXPORT_STOPPED).',
  })
  @ApiEnvelope({ type: 'boolean', example: true })
  @ApiErrors(400, 404, 410)
  ready(@Query() query: LinkKeyQuery): Promise<boolean> {
    return this.links.ready(query.key);
  }

  @Get()
  @ApiOperation({
    summary: 'Public download',
    description:
      'No credentials. Streams the linked file (Range, ETag, Content-Disposition with the link\'s fileName). External documents are read from ' +
      'their connector now. 404 unknown key; 410 expired, or an export that failed or was stopped; 409 EXPORT_NOT_READY while the export ' +
      'runs (poll the ready check). Each download from the first byte adds one to `used` (resumed ranges, HEAD and 304 do not).',
  })
  @ApiFileDownload('The linked content')
  @ApiErrors(400, 404, 409, 410, 502, 503, 504)
  async download(@Query() query: LinkKeyQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    return sendDownload(req, res, await this.links.download(query.key));
  }
}
