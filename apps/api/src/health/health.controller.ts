import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/auth.decorators';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { HealthService } from './health.service';

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ summary: 'Liveness', description: 'Answers while the process serves requests; no credentials needed.' })
  @ApiEnvelope({ type: 'object', properties: { status: { type: 'string', example: 'ok' } } })
  liveness(): { status: string } {
    return this.health.liveness();
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness',
    description: 'Checks the database and every connector. 503 when any is down; `error.details` says which.',
  })
  @ApiEnvelope({ type: 'object', properties: { status: { type: 'string', example: 'ok' }, details: { type: 'object' } } })
  @ApiErrors(503)
  readiness(): Promise<HealthCheckResult> {
    return this.health.readiness();
  }
}
