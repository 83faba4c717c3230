import { Inject, Injectable, type CanActivate, type ExecutionContext, type OnModuleDestroy } from '@nestjs/common';
import type { Request } from 'express';
import { TooManyRequestsError } from '@gateway/errors';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';

const WINDOW_MS = 60_000;

/**
 * Rate limit of the public download routes per client address (req.ip, so TRUST_PROXY decides
 * which address counts): at most GATEWAY_PUBLIC_RATE_LIMIT requests per fixed one-minute window,
 * then 429 with Retry-After until the window ends. Keys are 256 random bits, so guessing is
 * hopeless anyway; this bounds how fast anyone can try, and how much one address can pull.
 *
 * A fixed window in memory rather than @nestjs/throttler: its module is global (one set of
 * limits for the whole application, which the auth module may want for itself) and its 429 is an
 * HTTP exception of its own, while this one goes through the gateway's typed errors like every
 * other answer. Each process counts its own requests: behind a load balancer the limit is per node.
 */
@Injectable()
export class PublicRateLimitGuard implements CanActivate, OnModuleDestroy {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly limit: number;
  private readonly pruner: NodeJS.Timeout;

  constructor(
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) config: GatewayConfig,
  ) {
    this.limit = config.files.publicRateLimitPerMinute;
    // Windows of addresses that went quiet are dropped, so the map stays as small as the active client set.
    this.pruner = setInterval(() => this.prune(), WINDOW_MS);
    this.pruner.unref();
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.limit === 0) return true;
    const address = context.switchToHttp().getRequest<Request>().ip ?? 'unknown';
    const now = this.clock.now();
    let window = this.windows.get(address);
    if (!window || now - window.start >= WINDOW_MS) {
      window = { start: now, count: 0 };
      this.windows.set(address, window);
    }
    window.count++;
    if (window.count > this.limit) {
      const retryAfter = Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000));
      throw new TooManyRequestsError(`Too many public download requests from this address (at most ${this.limit} a minute); retry in ${retryAfter} s`, retryAfter);
    }
    return true;
  }

  onModuleDestroy(): void {
    clearInterval(this.pruner);
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [address, window] of this.windows) if (now - window.start >= WINDOW_MS) this.windows.delete(address);
  }
}
