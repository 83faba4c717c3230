import { Global, Injectable, Module } from '@nestjs/common';

/**
 * The time the gateway's own rules use (link and file expiry, sweeps):
 * epoch milliseconds. Injected, so tests can move it forward through
 * `app.get(Clock).advance(ms)` instead of waiting.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves this clock forward (tests only; production never calls it). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
