import { applyDecorators, Body, Delete, Get, Param, Post, Put, Query, StreamableFile, UseInterceptors, type PipeTransform } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { InvalidArgumentError } from '@gateway/errors';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import type { MessageResult } from '../common/envelope';
import { NEXT_CURSOR_HEADER, Page, PagingHeadersInterceptor } from '../common/paging';
import { Route, RouteFamily } from '../common/routes';
import { DownloadLinkDto } from '../files/files.dto';
import { JobReportDto, JobReportQuery, SaveJobReportQuery } from './job-report.dto';
import { JobReportService } from './job-report.service';
import { JobDefinitionDto, JobDto } from '../config/job-definition.dto';
import { JobControlService } from './job-control.service';
import { JobDefinitionsService } from './job-definitions.service';
import { ACTIONS, stateTableMarkdown, type JobAction } from './job-states';
import { JobGroupQuery, JobStatusDto, RecordStatusQuery, StartJobQuery } from './job-status.dto';

/** Path job ids: positive integers, anything else is a 400 naming the parameter. */
class JobIdPipe implements PipeTransform<string, number> {
  constructor(private readonly parameter: string) {}
  transform(value: string): number {
    if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
      throw new InvalidArgumentError(this.parameter, `Invalid parameter '${this.parameter}': must be a positive integer job id (got '${value}')`);
    }
    return Number(value);
  }
}

/** The job id of the path, as a number (the admin routes name it jobId, the job service jobid, as the spec does). */
const JobId = (name: 'jobId' | 'jobid') => Param(name, new JobIdPipe(name));
const JobIdParam = (name: 'jobId' | 'jobid') => ApiParam({ name, type: Number, description: 'Integer job id' });

const STATE_TABLE = `\n\nState table (status → allowed actions):\n\n${stateTableMarkdown()}`;

/** A control call (admin only) answered with the job's status record; 409 when the state table does not allow it. */
function JobControl(action: JobAction, summary: string): MethodDecorator {
  return applyDecorators(
    JobIdParam('jobid'),
    Route({
      summary,
      description: `${ACTIONS[action].effect}. Next status: ${ACTIONS[action].next}. 409 when the current status does not allow it.`,
      results: JobStatusDto,
      message: true,
      errors: [400, 404, 409],
      roles: ['admin'],
    }),
  );
}

@RouteFamily('admin/jobs', { tag: 'Job definitions (administration)', access: 'basic', roles: ['admin'] })
export class JobDefinitionsController {
  constructor(private readonly definitions: JobDefinitionsService) {}

  @Post()
  @Route({ summary: 'Define a job', description: 'Answers the definition with its new integer `jobId`.', results: JobDto, status: 201, errors: [400, 409] })
  create(@Body() body: JobDefinitionDto): Promise<JobDto> {
    return this.definitions.create(body);
  }

  @Get()
  @Route({ summary: 'List job definitions', results: JobDto, isArray: true })
  list(): Promise<JobDto[]> {
    return this.definitions.list();
  }

  @Get(':jobId')
  @JobIdParam('jobId')
  @Route({ summary: 'Get a job definition', results: JobDto, errors: [400, 404] })
  get(@JobId('jobId') jobId: number): Promise<JobDto> {
    return this.definitions.get(jobId);
  }

  @Put(':jobId')
  @JobIdParam('jobId')
  @Route({
    summary: 'Replace a job definition',
    description: '409 while a run is active, or for a job of the configuration file.',
    results: JobDto,
    errors: [400, 404, 409],
  })
  update(@JobId('jobId') jobId: number, @Body() body: JobDefinitionDto): Promise<JobDto> {
    return this.definitions.update(jobId, body);
  }

  @Delete(':jobId')
  @JobIdParam('jobId')
  @Route({
    summary: 'Delete a job',
    description: 'With its runs and audit records; returns the deleted definition. 409 while a run is active, or for a job of the configuration file.',
    results: JobDto,
    errors: [400, 404, 409],
  })
  delete(@JobId('jobId') jobId: number): Promise<JobDto> {
    return this.definitions.delete(jobId);
  }
}

/** Spec 4.5. Pause, abort and kill take GET (as the spec's calls do) and POST (for clients that will not change state with GET). */
@RouteFamily('job/service', { tag: 'Job service', access: 'basic' })
export class JobServiceController {
  constructor(
    private readonly jobs: JobControlService,
    private readonly reports: JobReportService,
  ) {}

  @Get('statuslist')
  @Route({
    summary: 'Job status list',
    description: `One status record per job.${STATE_TABLE}`,
    results: JobStatusDto,
    isArray: true,
    message: true,
  })
  statusList(@Query() query: JobGroupQuery): Promise<MessageResult<JobStatusDto[]>> {
    return this.jobs.statusList(query.jobGroup);
  }

  @Get(':jobid/status')
  @JobIdParam('jobid')
  @Route({
    summary: 'Job status',
    description: `The status record of the job's latest run; \`message\` is the reason of a failed run (also while a RUNNING run that has to fail lets its in-flight documents finish).${STATE_TABLE}`,
    results: JobStatusDto,
    message: true,
    errors: [400, 404],
  })
  status(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.status(jobId);
  }

  @Get(':jobid/start')
  @JobControl('start', 'Start job')
  start(@JobId('jobid') jobId: number, @Query() query: StartJobQuery, @CurrentUser() user: AuthenticatedUser): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.start(jobId, user.username, undefined, query.dryRun === true);
  }

  @Get(':jobid/resume')
  @JobControl('resume', 'Resume job')
  resume(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.resume(jobId);
  }

  @Get(':jobid/runerrors')
  @JobControl('runerrors', 'Run errors')
  runErrors(@JobId('jobid') jobId: number, @CurrentUser() user: AuthenticatedUser): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.runErrors(jobId, user.username);
  }

  @Get(':jobid/abort')
  @JobControl('abort', 'Abort job')
  abort(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.abort(jobId);
  }

  @Post(':jobid/abort')
  @JobControl('abort', 'Abort job (POST form)')
  abortPost(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.abort(jobId);
  }

  @Get(':jobid/pause')
  @JobControl('pause', 'Pause job (beyond the spec; backs canPauseJob)')
  pause(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.pause(jobId);
  }

  @Post(':jobid/pause')
  @JobControl('pause', 'Pause job (POST form)')
  pausePost(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.pause(jobId);
  }

  @Get(':jobid/kill')
  @JobControl('kill', 'Kill job (beyond the spec; backs canKillJob)')
  kill(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.kill(jobId);
  }

  @Post(':jobid/kill')
  @JobControl('kill', 'Kill job (POST form)')
  killPost(@JobId('jobid') jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.kill(jobId);
  }

  @Get(':jobid/recordstatus')
  @JobIdParam('jobid')
  @Route({
    summary: 'Get document status',
    description:
      'The text of the most recent audit record of that type for the source document: p Processed, r Read, e Error, d Duplicate, s Skipped. 404 when there is none.',
    results: { type: 'string', example: '2025-03-01T14:05:10 run 1_2 PROCESSED source=L2luL2EudHh0 path=/in/a.txt target=L291dC9hLnR4dA' },
    message: true,
    errors: [400, 404],
  })
  recordStatus(@JobId('jobid') jobId: number, @Query() query: RecordStatusQuery): Promise<MessageResult<string>> {
    return this.jobs.recordStatus(jobId, query.docId, query.recordType);
  }

  @Get(':jobid/report')
  @JobIdParam('jobid')
  @UseInterceptors(PagingHeadersInterceptor)
  @Route({
    summary: 'Run report (beyond the spec)',
    description:
      'One row per document of the run (default the latest; reports are kept for the latest two runs of a job, an older one is 410): ' +
      'source id and path, target id, outcome, message, read and finish times. `format=json` (default) answers a page of `limit` rows in ' +
      `document id order, the next page's cursor in ${NEXT_CURSOR_HEADER}; the first page also has \`counts\` (rows by outcome: p+e+d+s+r = read, ` +
      'p = written, e = failed, d+s = skipped). `format=csv` (text/csv, RFC 4180, a header line) and `format=ndjson` (application/x-ndjson, one ' +
      'row object a line) stream the whole run instead (`limit` and `cursor` do not apply).',
    results: JobReportDto,
    headers: { [NEXT_CURSOR_HEADER]: { description: 'json: the cursor of the next page; absent on the last', schema: { type: 'string' } } },
    errors: [400, 404, 410],
  })
  report(@JobId('jobid') jobId: number, @Query() query: JobReportQuery): Promise<Page<JobReportDto> | StreamableFile> {
    const format = query.format ?? 'json';
    return format === 'json' ? this.reports.page(jobId, query) : this.reports.stream(jobId, { ...query, format });
  }

  @Post(':jobid/report')
  @JobIdParam('jobid')
  @Route({
    summary: 'Save a run report as a user file (beyond the spec)',
    description:
      "`save=true`: writes the report of a finished run (ABORTED, FAILED, COMPLETED, COMPLETED_WITH_ERRORS; else 409) as a user file, CSV " +
      '(or ndjson with `format=ndjson`), and answers an internal link to it: downloaded with /api/files/user/download, shared with ' +
      '/api/files/external/link, swept by retention like any export.',
    results: DownloadLinkDto,
    status: 201,
    errors: [400, 404, 409, 410],
    roles: ['admin'],
  })
  saveReport(@JobId('jobid') jobId: number, @Query() query: SaveJobReportQuery, @CurrentUser() user: AuthenticatedUser): Promise<DownloadLinkDto> {
    if (!query.save) throw new InvalidArgumentError('save', "Invalid parameter 'save': must be true to save the report");
    return this.reports.save(jobId, query, user);
  }
}
