import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { TooManyRequestsError } from '@gateway/errors';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { Coordination } from '../coordination/coordination.service';

const WINDOW_MS = 60_000;

/**
 * Rate limit of the public download routes per client address (req.ip, so TRUST_PROXY decides
 * which address counts): at most GATEWAY_PUBLIC_RATE_LIMIT requests per one-minute window of the
 * gateway's Clock, then 429 with Retry-After until the window ends. Keys are 256 random bits, so
 * guessing is hopeless anyway; this bounds how fast anyone can try, and how much one address can pull.
 *
 * Counted by rate-limiter-flexible: in the process on a single node, in Redis with REDIS_URL, so the
 * limit holds for the whole deployment however a load balancer spreads the requests. While Redis
 * fails, each node counts on its own rather than refuse the downloads (which need no Redis otherwise).
 * The window is the Clock's minute (part of the key), not the library's own, so the gateway's one
 * notion of time rules here as it does for link expiry.
 */
@Injectable()
export class PublicRateLimitGuard implements CanActivate {
  private readonly limit: number;
  private readonly limiter: RateLimiterAbstract;

  constructor(
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
    coordination: Coordination,
  ) {
    this.limit = config.files.publicRateLimitPerMinute;
    this.limiter = coordination.rateLimiter({
      name: 'public-download',
      points: this.limit,
      durationSeconds: WINDOW_MS / 1000,
      inProcessWhenRedisFails: true,
    });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.limit === 0) return true;
    const address = context.switchToHttp().getRequest<Request>().ip ?? 'unknown';
    const now = this.clock.now();
    const window = Math.floor(now / WINDOW_MS);
    try {
      await this.limiter.consume(`${window}:${address}`);
      return true;
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
      throw new TooManyRequestsError(`Too many public download requests from this address (at most ${this.limit} a minute); retry in ${retryAfter} s`, retryAfter);
    }
  }
}
