import { Get, Query, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AccessAuditService } from '../audit/access-audit.service';
import { sendDownload } from '../common/download';
import { ApiFileDownload } from '../common/openapi';
import { Route, RouteFamily } from '../common/routes';
import { LinkKeyQuery } from './files.dto';
import { LinksService } from './links.service';
import { PublicRateLimitGuard } from './public-rate-limit.guard';

/** No credentials: whoever holds a valid key may download, at GATEWAY_PUBLIC_RATE_LIMIT requests a minute per address. */
@RouteFamily('public/download', { tag: 'File service', access: 'public', errors: [429] })
@UseGuards(PublicRateLimitGuard)
export class PublicDownloadController {
  constructor(
    private readonly links: LinksService,
    private readonly audit: AccessAuditService,
  ) {}

  @Get('ready')
  @Route({
    summary: 'Public download ready check',
    description:
      'No credentials. true when a download would deliver now (an external link, or a complete export); false while the export runs. ' +
      '404 unknown key; 410 expired link (LINK_EXPIRED) or an export that failed or was stopped (EXPORT_FAILED / EXPORT_STOPPED).',
    results: { type: 'boolean', example: true },
    errors: [400, 404, 410],
  })
  ready(@Query() query: LinkKeyQuery): Promise<boolean> {
    return this.links.ready(query.key);
  }

  @Get()
  @ApiFileDownload('The linked content')
  @Route({
    summary: 'Public download',
    description:
      'No credentials. Streams the linked file (Range, ETag, Content-Disposition with the link\'s fileName). External documents are read from ' +
      'their connector now. 404 unknown key; 410 expired, or an export that failed or was stopped; 409 EXPORT_NOT_READY while the export ' +
      'runs (poll the ready check). Each download from the first byte adds one to `used` (resumed ranges, HEAD and 304 do not).',
    errors: [400, 404, 409, 410, 502, 503, 504],
  })
  async download(@Query() query: LinkKeyQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    const source = await this.links.download(query.key);
    return sendDownload(req, res, source, { onServed: this.audit.watch(req, source.identity, query.key) });
  }
}
