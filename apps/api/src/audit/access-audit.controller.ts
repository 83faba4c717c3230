import { Get, Query, StreamableFile, UseGuards, UseInterceptors } from '@nestjs/common';
import { Readable } from 'node:stream';
import { InvalidArgumentError } from '@gateway/errors';
import { AccessAuditRepository, type AccessAuditFilter, type StoredAccessRecord } from '@gateway/persistence';
import { NEXT_CURSOR_HEADER, Page, PagingHeadersInterceptor } from '../common/paging';
import { Route, RouteFamily } from '../common/routes';
import { StrictInputGuard } from '../common/strict-input.guard';
import { AUDIT_PAGE_SIZE, AccessAuditQuery, AccessAuditRowDto } from './access-audit.dto';

/** Rows read from the database per statement while csv or ndjson streams. */
const STREAM_BATCH = 1000;
const CSV_COLUMNS = ['time', 'user', 'linkId', 'clientAddress', 'operation', 'connectorId', 'documentId', 'path', 'bytes', 'result'] as const satisfies ReadonlyArray<
  keyof AccessAuditRowDto
>;
const MEDIA_TYPES = { csv: 'text/csv; charset=utf-8', ndjson: 'application/x-ndjson; charset=utf-8' };

@RouteFamily('admin/audit', { tag: 'Administration', access: 'basic', roles: ['admin'] })
@UseGuards(StrictInputGuard)
export class AccessAuditController {
  constructor(private readonly repository: AccessAuditRepository) {}

  @Get()
  @UseInterceptors(PagingHeadersInterceptor)
  @Route({
    summary: 'Access audit',
    description:
      'One row per content read the gateway served: downloads (whole, range, version, offloaded to the proxy), each entry of a zip, and ' +
      'downloads through public links (user `public` and the link). Filters combine (AND). `format=json` (default) answers a page of `limit` ' +
      `rows in the order they were written, the next page's cursor in ${NEXT_CURSOR_HEADER}; \`format=csv\` (text/csv, RFC 4180, a header line) ` +
      'and `format=ndjson` stream every matching row (`limit` and `cursor` do not apply). Rows are written in batches, up to a second after ' +
      'the read ended; they are kept GATEWAY_ACCESS_AUDIT_RETENTION_DAYS.',
    results: AccessAuditRowDto,
    isArray: true,
    headers: { [NEXT_CURSOR_HEADER]: { description: 'json: the cursor of the next page; absent on the last', schema: { type: 'string' } } },
    errors: [400],
  })
  list(@Query() query: AccessAuditQuery): Promise<Page<AccessAuditRowDto[]>> | StreamableFile {
    const filter = toFilter(query);
    const format = query.format ?? 'json';
    if (format !== 'json') {
      const name = `access-audit.${format}`;
      return new StreamableFile(Readable.from(this.lines(filter, format)), { type: MEDIA_TYPES[format], disposition: `attachment; filename="${name}"` });
    }
    return this.page(filter, query);
  }

  private async page(filter: AccessAuditFilter, query: AccessAuditQuery): Promise<Page<AccessAuditRowDto[]>> {
    const limit = query.limit ?? AUDIT_PAGE_SIZE;
    // One row more than asked says whether another page follows.
    const rows = await this.repository.list(filter, query.cursor === undefined ? undefined : Number(query.cursor), limit + 1);
    const more = rows.length > limit;
    const shown = more ? rows.slice(0, limit) : rows;
    return new Page(shown.map(toRowDto), more ? String(shown[shown.length - 1].id) : undefined);
  }

  /** The next batch is read once the socket took the last (Readable.from pulls on demand). */
  private async *lines(filter: AccessAuditFilter, format: 'csv' | 'ndjson'): AsyncGenerator<string> {
    if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\r\n`;
    let after: number | undefined;
    for (;;) {
      const rows = await this.repository.list(filter, after, STREAM_BATCH);
      if (rows.length === 0) return;
      let text = '';
      for (const row of rows) {
        const dto = toRowDto(row);
        text += format === 'csv' ? `${CSV_COLUMNS.map((c) => csvField(dto[c])).join(',')}\r\n` : `${JSON.stringify(dto)}\n`;
      }
      yield text;
      if (rows.length < STREAM_BATCH) return;
      after = rows[rows.length - 1].id;
    }
  }
}

function toFilter(query: AccessAuditQuery): AccessAuditFilter {
  const from = query.from === undefined ? undefined : Date.parse(query.from);
  const to = query.to === undefined ? undefined : Date.parse(query.to);
  if (from !== undefined && to !== undefined && from > to) throw new InvalidArgumentError('to', "Invalid parameter 'to': before 'from'");
  return { user: query.user, documentId: query.documentId, connectorId: query.connectorId, operation: query.operation, from, to };
}

function toRowDto(row: StoredAccessRecord): AccessAuditRowDto {
  return {
    time: new Date(row.time).toISOString(),
    user: row.user,
    linkId: row.linkId,
    clientAddress: row.clientAddress,
    operation: row.operation,
    connectorId: row.connectorId,
    documentId: row.documentId,
    path: row.path,
    bytes: row.bytes,
    result: row.result,
  };
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled; null is empty. */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
