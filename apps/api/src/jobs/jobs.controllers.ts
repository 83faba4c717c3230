import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, type PipeTransform } from '@nestjs/common';
import { ApiBasicAuth, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { InvalidArgumentError } from '@gateway/connector-api';
import { CurrentUser, Roles, type AuthenticatedUser } from '../auth/auth.decorators';
import type { MessageResult } from '../common/envelope';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { JobDefinitionDto, JobDto } from './job-definition.dto';
import { JobControlService } from './job-control.service';
import { JobDefinitionsService } from './job-definitions.service';
import { ACTIONS, stateTableMarkdown } from './job-states';
import { JobStatusDto } from './job-status.dto';

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

const STATE_TABLE = `\n\nState table (status → allowed actions):\n\n${stateTableMarkdown()}`;
const describe = (a: keyof typeof ACTIONS) => `${ACTIONS[a].effect}. Next status: ${ACTIONS[a].next}. 409 when the current status does not allow it.`;

@ApiTags('Job definitions (administration)')
@ApiBasicAuth()
@ApiErrors(401, 403)
@Roles('admin')
@Controller('admin/jobs')
export class JobDefinitionsController {
  constructor(private readonly definitions: JobDefinitionsService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Define a job', description: 'Answers the definition with its new integer `jobId`.' })
  @ApiEnvelope(JobDto, { status: 201 })
  @ApiErrors(400, 409)
  create(@Body() body: JobDefinitionDto): Promise<JobDto> {
    return this.definitions.create(body);
  }

  @Get()
  @ApiOperation({ summary: 'List job definitions' })
  @ApiEnvelope(JobDto, { isArray: true })
  list(): Promise<JobDto[]> {
    return this.definitions.list();
  }

  @Get(':jobId')
  @ApiOperation({ summary: 'Get a job definition' })
  @ApiParam({ name: 'jobId', type: Number })
  @ApiEnvelope(JobDto)
  @ApiErrors(400, 404)
  get(@Param('jobId', new JobIdPipe('jobId')) jobId: number): Promise<JobDto> {
    return this.definitions.get(jobId);
  }

  @Put(':jobId')
  @ApiOperation({ summary: 'Replace a job definition', description: '409 while a run is active, or for a job of the configuration file.' })
  @ApiParam({ name: 'jobId', type: Number })
  @ApiEnvelope(JobDto)
  @ApiErrors(400, 404, 409)
  update(@Param('jobId', new JobIdPipe('jobId')) jobId: number, @Body() body: JobDefinitionDto): Promise<JobDto> {
    return this.definitions.update(jobId, body);
  }

  @Delete(':jobId')
  @ApiOperation({ summary: 'Delete a job', description: 'With its runs and audit records; returns the deleted definition. 409 while a run is active, or for a job of the configuration file.' })
  @ApiParam({ name: 'jobId', type: Number })
  @ApiEnvelope(JobDto)
  @ApiErrors(400, 404, 409)
  delete(@Param('jobId', new JobIdPipe('jobId')) jobId: number): Promise<JobDto> {
    return this.definitions.delete(jobId);
  }
}

const jobIdParam = ApiParam({ name: 'jobid', type: Number, description: 'Integer job id' });

@ApiTags('Job service')
@ApiBasicAuth()
@ApiErrors(401)
@Controller('job/service')
export class JobServiceController {
  constructor(private readonly jobs: JobControlService) {}

  @Get('statuslist')
  @ApiOperation({ summary: 'Job status list', description: `One status record per job.${STATE_TABLE}` })
  @ApiQuery({ name: 'jobGroup', required: false, description: 'Only jobs of this group' })
  @ApiEnvelope(JobStatusDto, { isArray: true, message: true })
  statusList(@Query('jobGroup') jobGroup?: string): Promise<MessageResult<JobStatusDto[]>> {
    return this.jobs.statusList(typeof jobGroup === 'string' ? jobGroup : undefined);
  }

  @Get(':jobid/status')
  @ApiOperation({ summary: 'Job status', description: `The status record of the job's latest run; \`message\` is the reason of a failed run (also while a RUNNING run that has to fail lets its in-flight documents finish).${STATE_TABLE}` })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 404)
  status(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.status(jobId);
  }

  @Get(':jobid/start')
  @Roles('admin')
  @ApiOperation({ summary: 'Start job', description: describe('start') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  start(@Param('jobid', new JobIdPipe('jobid')) jobId: number, @CurrentUser() user: AuthenticatedUser): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.start(jobId, user.username);
  }

  @Get(':jobid/abort')
  @Roles('admin')
  @ApiOperation({ summary: 'Abort job', description: describe('abort') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  abort(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.abort(jobId);
  }

  @Post(':jobid/abort')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({ summary: 'Abort job (POST form)', description: describe('abort') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  abortPost(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.abort(jobId);
  }

  @Get(':jobid/resume')
  @Roles('admin')
  @ApiOperation({ summary: 'Resume job', description: describe('resume') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  resume(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.resume(jobId);
  }

  @Get(':jobid/runerrors')
  @Roles('admin')
  @ApiOperation({ summary: 'Run errors', description: `${describe('runerrors')} 501 when the source connector cannot fetch documents by id.` })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409, 501)
  runErrors(@Param('jobid', new JobIdPipe('jobid')) jobId: number, @CurrentUser() user: AuthenticatedUser): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.runErrors(jobId, user.username);
  }

  @Get(':jobid/pause')
  @Roles('admin')
  @ApiOperation({ summary: 'Pause job (beyond the spec; backs canPauseJob)', description: describe('pause') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  pause(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.pause(jobId);
  }

  @Post(':jobid/pause')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({ summary: 'Pause job (POST form)', description: describe('pause') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  pausePost(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.pause(jobId);
  }

  @Get(':jobid/kill')
  @Roles('admin')
  @ApiOperation({ summary: 'Kill job (beyond the spec; backs canKillJob)', description: describe('kill') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  kill(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.kill(jobId);
  }

  @Post(':jobid/kill')
  @HttpCode(200)
  @Roles('admin')
  @ApiOperation({ summary: 'Kill job (POST form)', description: describe('kill') })
  @jobIdParam
  @ApiEnvelope(JobStatusDto, { message: true })
  @ApiErrors(400, 403, 404, 409)
  killPost(@Param('jobid', new JobIdPipe('jobid')) jobId: number): Promise<MessageResult<JobStatusDto>> {
    return this.jobs.kill(jobId);
  }

  @Get(':jobid/recordstatus')
  @ApiOperation({
    summary: 'Get document status',
    description: 'The text of the most recent audit record of that type for the source document: p Processed, r Read, e Error, d Duplicate, s Skipped. 404 when there is none.',
  })
  @jobIdParam
  @ApiQuery({ name: 'docId', description: 'Source id of the document' })
  @ApiQuery({ name: 'recordType', enum: ['p', 'r', 'e', 'd', 's'] })
  @ApiEnvelope({ type: 'string', example: '2025-03-01T14:05:10 run 1_2 PROCESSED source=L2luL2EudHh0 path=/in/a.txt target=L291dC9hLnR4dA' }, { message: true })
  @ApiErrors(400, 404)
  recordStatus(
    @Param('jobid', new JobIdPipe('jobid')) jobId: number,
    @Query('docId') docId: unknown,
    @Query('recordType') recordType: unknown,
  ): Promise<MessageResult<string>> {
    if (typeof docId !== 'string' || docId === '') throw new InvalidArgumentError('docId', "Invalid parameter 'docId': required, the source id of the document");
    if (typeof recordType !== 'string') throw new InvalidArgumentError('recordType', "Invalid parameter 'recordType': required, one of p, r, e, d, s");
    return this.jobs.recordStatus(jobId, docId, recordType);
  }
}
