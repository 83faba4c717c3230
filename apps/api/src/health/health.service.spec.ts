import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { UpstreamUnavailableError } from '@gateway/errors';
import { DATABASE } from '@gateway/persistence';
import { Coordination } from '../coordination/coordination.service';
import { ConnectorRegistry } from '../connectors/connector-registry.service';
import { HealthService } from './health.service';

type Probe = () => Promise<void>;

async function healthWith(database: Probe, connectors: Record<string, Probe>): Promise<HealthService> {
  const registry = { list: () => Object.entries(connectors).map(([id, checkHealth]) => ({ id, typeId: 'filesystem', checkHealth })) };
  const moduleRef = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false })],
    providers: [HealthService, { provide: Coordination, useValue: { shared: false } }, { provide: ConnectorRegistry, useValue: registry }, { provide: DATABASE, useValue: { engine: 'sqlite', ping: database } }],
  }).compile();
  return moduleRef.get(HealthService);
}

const up: Probe = async () => undefined;

describe('HealthService', () => {
  afterEach(() => jest.useRealTimers());

  it('is ready when the database and every connector answer, saying what it checked', async () => {
    const health = await healthWith(up, { fs: up, archive: up });
    await expect(health.readiness()).resolves.toMatchObject({
      status: 'ok',
      details: { database: { status: 'up', engine: 'sqlite' }, 'connector:fs': { status: 'up', typeId: 'filesystem' }, 'connector:archive': { status: 'up' } },
    });
  });

  it('names what is down in a 503 error, with every probe in its details', async () => {
    const health = await healthWith(up, { fs: up, dms: () => Promise.reject(new Error('connect ECONNREFUSED')) });
    const error = await health.readiness().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).message).toBe('Not ready: connector:dms down');
    expect((error as UpstreamUnavailableError).details).toMatchObject({
      details: { 'connector:fs': { status: 'up' }, 'connector:dms': { status: 'down', message: 'connect ECONNREFUSED' }, database: { status: 'up' } },
    });
  });

  it('gives up on a probe that does not answer within 5 seconds', async () => {
    jest.useFakeTimers();
    const health = await healthWith(() => new Promise<void>(() => undefined), { fs: up });
    const answer = health.readiness().catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(4999);
    let settled = false;
    void answer.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    const error = (await answer) as UpstreamUnavailableError;
    expect(error.message).toBe('Not ready: database down');
    expect(error.details).toMatchObject({ details: { database: { status: 'down', message: 'timed out after 5000 ms' } } });
  });

  it('is alive whatever the probes say', async () => {
    const health = await healthWith(() => Promise.reject(new Error('down')), {});
    expect(health.liveness()).toEqual({ status: 'ok' });
  });
});
