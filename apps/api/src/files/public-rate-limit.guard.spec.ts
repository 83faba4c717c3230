import type { ExecutionContext } from '@nestjs/common';
import { TooManyRequestsError } from '@gateway/errors';
import { Clock } from '../common/clock';
import type { GatewayConfig } from '../config/gateway-config';
import { Coordination } from '../coordination/coordination.service';
import { PublicRateLimitGuard } from './public-rate-limit.guard';

function from(ip: string): ExecutionContext {
  return { switchToHttp: () => ({ getRequest: () => ({ ip }) }) } as unknown as ExecutionContext;
}

function guard(limit: number, clock = new Clock()): PublicRateLimitGuard {
  const config = { files: { publicRateLimitPerMinute: limit }, dataDir: '/tmp/unused', jobs: {}, nodeId: 'test' } as unknown as GatewayConfig;
  return new PublicRateLimitGuard(clock, config, new Coordination(config));
}

/** 'ok', or the Retry-After seconds of the refusal. */
async function outcome(g: PublicRateLimitGuard, ip: string): Promise<'ok' | number> {
  try {
    expect(await g.canActivate(from(ip))).toBe(true);
    return 'ok';
  } catch (e) {
    if (!(e instanceof TooManyRequestsError)) throw e;
    return e.retryAfterSeconds!;
  }
}

describe('PublicRateLimitGuard', () => {
  it('lets `limit` requests of an address through per minute of the Clock, then refuses until the minute ends', async () => {
    const clock = new Clock();
    // 20 s into a minute.
    clock.advance(60_000 - (clock.now() % 60_000) + 20_000);
    const g = guard(3, clock);
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await outcome(g, '10.0.0.1'));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 40, 40]);
    expect(await outcome(g, '10.0.0.2')).toBe('ok');
    clock.advance(39_000);
    await expect(g.canActivate(from('10.0.0.1'))).rejects.toThrow('Too many public download requests from this address (at most 3 a minute); retry in 1 s');
    clock.advance(1_000);
    expect(await outcome(g, '10.0.0.1')).toBe('ok');
  });

  it('counts nothing with a limit of 0', async () => {
    const g = guard(0);
    for (let i = 0; i < 10; i++) expect(await outcome(g, '10.0.0.1')).toBe('ok');
  });
});
