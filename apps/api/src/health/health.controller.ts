import { Controller, Get, Inject, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService, type HealthCheckResult, type HealthIndicatorResult } from '@nestjs/terminus';
import { UpstreamUnavailableError } from '@gateway/connector-api';
import { DATABASE, type Database } from '@gateway/persistence';
import { Public } from '../auth/auth.decorators';
import { ApiEnvelope, ApiErrors } from '../common/openapi';
import { ConnectorRegistry } from '../connectors/connector-registry.service';

const CHECK_TIMEOUT_MS = 5000;

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly registry: ConnectorRegistry,
    @Inject(DATABASE) private readonly database: Database,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Liveness', description: 'Answers while the process serves requests; no credentials needed.' })
  @ApiEnvelope({ type: 'object', properties: { status: { type: 'string', example: 'ok' } } })
  liveness(): { status: string } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness',
    description: 'Checks the database and every connector. 503 when any is down; `error.details` says which.',
  })
  @ApiEnvelope({ type: 'object', properties: { status: { type: 'string', example: 'ok' }, details: { type: 'object' } } })
  @ApiErrors(503)
  async readiness(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.probe('database', () => this.database.ping(), { engine: this.database.engine }),
        ...this.registry.list().map((c) => () => this.probe(`connector:${c.id}`, () => c.checkHealth(), { typeId: c.typeId })),
      ]);
    } catch (e) {
      if (e instanceof ServiceUnavailableException) {
        const body = e.getResponse() as HealthCheckResult;
        const down = Object.keys(body.error ?? {});
        throw new UpstreamUnavailableError(`Not ready: ${down.join(', ')} down`, { details: body.details });
      }
      throw e;
    }
  }

  private async probe(key: string, check: () => Promise<void>, data: Record<string, unknown>): Promise<HealthIndicatorResult> {
    const session = this.indicators.check(key);
    try {
      await withTimeout(check(), CHECK_TIMEOUT_MS);
      return session.up(data);
    } catch (e) {
      return session.down({ ...data, message: (e as Error).message });
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
