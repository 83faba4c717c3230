import { applyDecorators, Delete, Get, Param, Post, Put, Query, Req, Res, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiParam, ApiQuery, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AccessAuditService } from '../audit/access-audit.service';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { sendDownload } from '../common/download';
import { RawBody } from '../common/raw-body';
import { Route, RouteFamily } from '../common/routes';
import { AcceptsQuery } from '../common/strict-input.guard';
import { IncomingContent, RequestContent } from '../common/incoming-content';
import { ApiFileDownload } from '../common/openapi';
import { NEXT_CURSOR_HEADER, PagingHeadersInterceptor } from '../common/paging';
import {
  CheckInQuery,
  DeleteQuery,
  FileIdQuery,
  FolderItemEntryDto,
  FolderItemsQuery,
  FolderPathQuery,
  IdByPathQuery,
  IdResultDto,
  ItemIdQuery,
  PostFileQuery,
  PropertyEntryDto,
  UpdateContentQuery,
  UpdateQuery,
  VersionEntryDto,
} from './content.dto';
import { FILE_PART, ContentService, type IdResult } from './content.service';
import { PROPERTY_NAME_PATTERN, type PropertyMap, type VersionEntry } from './content.mapping';
import { RawQuery } from './query-properties.decorator';

/** Free `<property>=<value>` names beside the route's DTO: any name a property may have (the service checks each further). */
const PROPERTY_NAMES = AcceptsQuery({ pattern: PROPERTY_NAME_PATTERN, patternDescription: '<property>=<value> (a letter, then up to 127 letters, digits or _ . : -)' });

const PROPERTIES_QUERY_DOC = ApiQuery({
  name: 'properties',
  required: false,
  style: 'form',
  explode: true,
  schema: { type: 'object', additionalProperties: { type: 'string' }, example: { department: 'finance', status: 'final' } },
  description:
    'Free-form `<property>=<value>` query parameters, any number (the parameter is not literally called `properties`). ' +
    'Names: a letter, then up to 127 letters, digits or `_ . : -`; `svc_` names are maintained by the service and refused. ' +
    'Each name once. Value rules are the connector\'s (the filesystem connector removes a property given an empty value).',
});
const PROPERTIES_QUERY = applyDecorators(PROPERTIES_QUERY_DOC, PROPERTY_NAMES);

const RAW_BODY = ApiBody({
  description: 'The new content, raw (any media type; its Content-Type is kept where the repository records one). Streamed to the repository, never buffered',
  required: false,
  schema: { type: 'string', format: 'binary' },
});

/** Errors of any call that reaches the repository; writes add 409 and 501 (a capability the connector lacks). */
const READ_ERRORS = [400, 502, 503, 504];
const WRITE_ERRORS = [400, 409, 502, 503, 504];

// 501 on every route: a search connector has no content group, a content connector may lack a write group.
@RouteFamily('repo/:connectorId', { tag: 'Content service', access: 'basic', errors: [404, 501] })
@ApiParam({ name: 'connectorId', description: 'Connector id (see Get connections)', example: 'fs' })
@ApiExtraModels(FolderItemEntryDto, PropertyEntryDto)
export class ContentController {
  constructor(
    private readonly content: ContentService,
    private readonly audit: AccessAuditService,
  ) {}

  @Get('file')
  @ApiFileDownload('The document content')
  @Route({
    summary: 'Get file',
    description:
      'Streams the document (or the version whose id listversions gave). Conditional GET with If-None-Match / If-Modified-Since, ' +
      'one byte range with Range (and If-Range); several ranges get the whole content. HEAD gives the headers alone.',
    errors: READ_ERRORS,
  })
  async file(@Param('connectorId') connectorId: string, @Query() query: ItemIdQuery, @Req() req: Request, @Res() res: Response): Promise<void> {
    const source = await this.content.fileDownload(connectorId, query.id);
    return sendDownload(req, res, source, { onServed: this.audit.watch(req, source.identity) });
  }

  @Get('idbypath')
  @Route({
    summary: 'Get object id by path',
    description: 'The id of the item `fileName` inside the folder `folderPath`',
    results: IdResultDto,
    errors: READ_ERRORS,
  })
  idByPath(@Param('connectorId') connectorId: string, @Query() query: IdByPathQuery): Promise<IdResult> {
    return this.content.idByPath(connectorId, query);
  }

  @Post('file')
  // Document content too (in a multipart part): the JSON/form parsers and their 415 stay away, the upload limit applies.
  @RawBody()
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    required: true,
    schema: { type: 'object', required: [FILE_PART], properties: { [FILE_PART]: { type: 'string', format: 'binary', description: 'The file' } } },
  })
  @Route({
    summary: 'Post file',
    description:
      'Creates a document from the multipart/form-data part named `file` (exactly one file part; a boundary is required). ' +
      'The part is streamed to the repository as it arrives. `fileName` wins over the part\'s own filename. ' +
      'Or, with `uploadId` and no body, from the caller\'s finished resumable upload (/api/uploads), streamed from the uploads folder and then removed: ' +
      '409 while it is unfinished, 404 when it is not the caller\'s.',
    results: IdResultDto,
    status: 201,
    answer: 'Created; the id of the new document',
    errors: [...WRITE_ERRORS, 413, 415],
  })
  createFile(
    @Param('connectorId') connectorId: string,
    @Query() query: PostFileQuery,
    @RequestContent() body: IncomingContent,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<IdResult> {
    return this.content.createFile(connectorId, query, body, user);
  }

  @Put('update')
  @RawBody()
  @ApiConsumes('application/octet-stream')
  @RAW_BODY
  @PROPERTIES_QUERY
  @Route({
    summary: 'Update file',
    description:
      'Names the document by `fileId`, or by `fileName` with `folderId`. With a non-empty body, the body becomes the new content ' +
      '(capability updateFile) and any `<property>=<value>` parameters are then set too; without a body, the properties are updated ' +
      '(capability updateProperties). A request with neither is refused (400, parameter `body`).',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  update(
    @Param('connectorId') connectorId: string,
    @Query() query: UpdateQuery,
    @RawQuery() rawQuery: Record<string, unknown>,
    @RequestContent() body: IncomingContent,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<IdResult> {
    return this.content.update(connectorId, query, rawQuery, body, user);
  }

  @Put('updateContent')
  @RawBody()
  @ApiConsumes('application/octet-stream')
  @RAW_BODY
  @Route({
    summary: 'Update file content',
    description:
      'The raw body (streamed; an empty body makes an empty document) becomes the new content. Capability updateFile. ' +
      'Or, with `uploadId` and no body, the caller\'s finished resumable upload does (then removed; 409 while unfinished, 404 when not the caller\'s).',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  updateContent(
    @Param('connectorId') connectorId: string,
    @Query() query: UpdateContentQuery,
    @RequestContent() body: IncomingContent,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<IdResult> {
    return this.content.updateContent(connectorId, query, body, user);
  }

  @Put('updateProperties')
  @PROPERTIES_QUERY
  @Route({
    summary: 'Update file properties',
    description: 'Sets each `<property>=<value>` query parameter (at least one). Capability updateProperties.',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  updateProperties(
    @Param('connectorId') connectorId: string,
    @Query() query: FileIdQuery,
    @RawQuery() rawQuery: Record<string, unknown>,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<IdResult> {
    return this.content.updateProperties(connectorId, query.fileId, rawQuery, user);
  }

  @Post('checkin')
  @Route({
    summary: 'Check in',
    description: 'Makes a new version from the checked-out document, with an optional comment. Capability checkIn.',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  checkIn(@Param('connectorId') connectorId: string, @Query() query: CheckInQuery, @CurrentUser() user: AuthenticatedUser): Promise<IdResult> {
    return this.content.checkIn(connectorId, query, user);
  }

  @Post('checkout')
  @Route({
    summary: 'Check out',
    description: 'Reserves the document for the caller: other users get 409 (naming the holder) on updates until it is checked in. Capability checkOut.',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  checkOut(@Param('connectorId') connectorId: string, @Query() query: ItemIdQuery, @CurrentUser() user: AuthenticatedUser): Promise<IdResult> {
    return this.content.checkOut(connectorId, query.id, user);
  }

  @Get('listversions')
  @Route({
    summary: 'List versions',
    description: 'Every version, newest first (the current version first). Each docId reads that version with Get file. Capability listVersions.',
    results: VersionEntryDto,
    isArray: true,
    errors: READ_ERRORS,
  })
  listVersions(@Param('connectorId') connectorId: string, @Query() query: ItemIdQuery): Promise<VersionEntry[]> {
    return this.content.listVersions(connectorId, query.id);
  }

  @Delete('delete')
  @Route({
    summary: 'Delete file or folder',
    description:
      'With `id`: deletes the document, every version (allversions=true, the default) or only the latest (false). ' +
      'With `path`: deletes the folder and its content (capability deleteFolder, filesystem-style connectors only). Exactly one of id and path.',
    results: IdResultDto,
    errors: WRITE_ERRORS,
  })
  delete(@Param('connectorId') connectorId: string, @Query() query: DeleteQuery, @CurrentUser() user: AuthenticatedUser): Promise<IdResult> {
    return this.content.delete(connectorId, query, user);
  }

  @Get('folderitems')
  @UseInterceptors(PagingHeadersInterceptor)
  @Route({
    summary: 'List folder items',
    description:
      'An object keyed by item path (spec 2.3). Beyond the spec, `limit` pages the listing: while more items follow, the answer carries ' +
      `${NEXT_CURSOR_HEADER} (pass it back as \`cursor\`) and Link rel="next"; the last page has neither. \`results\` keeps the spec shape.`,
    results: { type: 'object', additionalProperties: { $ref: getSchemaPath(FolderItemEntryDto) } },
    answer: 'Items keyed by ItemPath',
    headers: {
      [NEXT_CURSOR_HEADER]: { description: 'Cursor of the next page; absent on the last page', schema: { type: 'string' } },
      Link: { description: '<this URL with cursor=...>; rel="next"; absent on the last page', schema: { type: 'string' } },
    },
    errors: READ_ERRORS,
  })
  folderItems(@Param('connectorId') connectorId: string, @Query() query: FolderItemsQuery): Promise<unknown> {
    return this.content.folderItems(connectorId, query);
  }

  @Post('folder')
  @Route({
    summary: 'Create folder',
    description: 'Creates the folder at an absolute path, with any missing parents. Capability createFolder.',
    results: IdResultDto,
    status: 201,
    answer: 'Created; the id of the folder',
    errors: WRITE_ERRORS,
  })
  createFolder(@Param('connectorId') connectorId: string, @Query() query: FolderPathQuery, @CurrentUser() user: AuthenticatedUser): Promise<IdResult> {
    return this.content.createFolder(connectorId, query.path, user);
  }

  @Get('properties')
  @Route({
    summary: 'Get item properties',
    description:
      'Spec 2.5 map: svc_created, svc_last_modified (epoch milliseconds), svc_filename, svc_content_type, svc_length, then custom properties. ' +
      "Each value is { DisplayName: '[<value>]' (the value inside square brackets, '[]' when absent), QueryName: <label> } " +
      '(labels Created, Last Modified, File Name, Mime Type, Content Length; a custom property is labelled with its own name).',
    results: { type: 'object', additionalProperties: { $ref: getSchemaPath(PropertyEntryDto) } },
    errors: READ_ERRORS,
  })
  properties(@Param('connectorId') connectorId: string, @Query() query: ItemIdQuery): Promise<PropertyMap> {
    return this.content.properties(connectorId, query.id);
  }
}
