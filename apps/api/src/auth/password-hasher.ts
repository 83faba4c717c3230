import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { ServiceBusyError } from '@gateway/errors';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { PasswordPool, type Argon2Params } from './password-pool';

/**
 * OWASP Password Storage Cheat Sheet, "Argon2id": m=19 MiB (19456 KiB), t=2, p=1 — the first of its
 * equivalent settings, the one that costs least memory per verification (a flood is bounded by
 * threads × m). Hashes made with other parameters (the former 64 MiB, t=3, p=4) keep verifying: argon2
 * writes its parameters into the hash; a successful login rehashes them with these.
 */
export const ARGON2_PARAMS: Argon2Params = { memoryCost: 19456, timeCost: 2, parallelism: 1 };

/** argon2id hashing and verification, off the main thread and off libuv's pool (see PasswordPool). */
@Injectable()
export class PasswordHasher implements OnApplicationShutdown {
  private readonly pool: PasswordPool;
  private dummyHash?: Promise<string>;

  constructor(@Inject(GATEWAY_CONFIG) config: GatewayConfig) {
    this.pool = new PasswordPool(config.auth.verifyThreads, config.auth.verifyQueue);
  }

  hash(password: string): Promise<string> {
    return this.pool.hash(password, ARGON2_PARAMS);
  }

  /** False for a wrong password or a hash argon2 cannot read; ServiceBusyError when the pool's queue is full. */
  async verify(hash: string, password: string): Promise<boolean> {
    return this.pool.verify(hash, password).catch((e: unknown) => {
      if (e instanceof ServiceBusyError) throw e;
      return false;
    });
  }

  /** Spends the same time as a real verification, so unknown user names are not revealed by timing. */
  async verifyAgainstNothing(password: string): Promise<void> {
    if (!this.dummyHash) {
      const made = this.hash('not-a-real-password-' + Math.random());
      this.dummyHash = made;
      // Refused (threads busy): the next unknown name tries again, rather than every one failing for good.
      made.catch(() => {
        if (this.dummyHash === made) this.dummyHash = undefined;
      });
    }
    await this.verify(await this.dummyHash, password);
  }

  /** True when `hash` was made with other parameters than ARGON2_PARAMS (or is not argon2id). */
  needsRehash(hash: string): boolean {
    // PHC string: $argon2id$v=19$m=…,t=…,p=…$salt$hash; libraries differ in the order of m, t and p.
    const parts = hash.split('$');
    if (parts[1] !== 'argon2id' || parts[2] !== 'v=19' || parts[3] === undefined) return true;
    const params = new Map(parts[3].split(',').map((kv) => kv.split('=') as [string, string]));
    return (
      Number(params.get('m')) !== ARGON2_PARAMS.memoryCost ||
      Number(params.get('t')) !== ARGON2_PARAMS.timeCost ||
      Number(params.get('p')) !== ARGON2_PARAMS.parallelism
    );
  }

  /** After the HTTP server has closed: requests still in flight during shutdown keep verifying. */
  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }
}
