import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService, type HealthCheckResult, type HealthIndicatorResult } from '@nestjs/terminus';
import { UpstreamUnavailableError } from '@gateway/errors';
import { DATABASE, type Database } from '@gateway/persistence';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { Coordination } from '../coordination/coordination.service';

// A probe that hangs must not hang the readiness answer (load balancers give up long before).
const CHECK_TIMEOUT_MS = 5000;

/** Liveness and readiness: the database and every configured connector, probed at once. */
@Injectable()
export class HealthService {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly registry: ConnectorRegistry,
    @Inject(DATABASE) private readonly database: Database,
    private readonly coordination: Coordination,
  ) {}

  liveness(): { status: string } {
    return { status: 'ok' };
  }

  /** Throws UpstreamUnavailableError (503) naming what is down; terminus's own exception would bypass the envelope. */
  async readiness(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.probe('database', () => this.database.ping(), { engine: this.database.engine }),
        // Redis carries the lock-out counters and the cache invalidations of several nodes: a node without it is not ready.
        ...(this.coordination.shared ? [() => this.probe('redis', () => this.coordination.ping(), {})] : []),
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
