import { Get } from '@nestjs/common';
import type { HealthCheckResult } from '@nestjs/terminus';
import { Route, RouteFamily } from '../common/routes';
import { HealthService } from './health.service';

@RouteFamily('health', { tag: 'Health', access: 'public' })
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @Route({
    summary: 'Liveness',
    description: 'Answers while the process serves requests; no credentials needed.',
    results: { type: 'object', properties: { status: { type: 'string', example: 'ok' } } },
  })
  liveness(): { status: string } {
    return this.health.liveness();
  }

  @Get('ready')
  @Route({
    summary: 'Readiness',
    description: 'Checks the database and every connector. 503 when any is down; `error.details` says which.',
    results: { type: 'object', properties: { status: { type: 'string', example: 'ok' }, details: { type: 'object' } } },
    errors: [503],
  })
  readiness(): Promise<HealthCheckResult> {
    return this.health.readiness();
  }
}
