import { hashSync } from '@node-rs/argon2';
import { ServiceBusyError } from '@gateway/errors';
import type { GatewayConfig } from '../config/gateway-config';
import { ARGON2_PARAMS, PasswordHasher } from './password-hasher';
import { PasswordPool } from './password-pool';

const cheap = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

describe('PasswordPool', () => {
  it('hashes and verifies argon2id in its threads, hashes from other libraries included', async () => {
    const pool = new PasswordPool(2, 10);
    try {
      const hash = await pool.hash('secret-one', cheap);
      expect(hash).toMatch(/^\$argon2id\$v=19\$m=1024,t=1,p=1\$/);
      expect(await pool.verify(hash, 'secret-one')).toBe(true);
      expect(await pool.verify(hash, 'secret-two')).toBe(false);
      // The former library's layout (m, p, t) verifies too.
      const [, , , , salt, digest] = hash.split('$');
      expect(await pool.verify(`$argon2id$v=19$m=1024,p=1,t=1$${salt}$${digest}`, 'secret-one')).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('refuses at once, with ServiceBusyError, what exceeds its threads and queue; then serves again', async () => {
    const pool = new PasswordPool(1, 1);
    try {
      const hash = hashSync('pw', { algorithm: 2, ...cheap });
      const results = await Promise.allSettled([pool.verify(hash, 'pw'), pool.verify(hash, 'pw'), pool.verify(hash, 'pw'), pool.verify(hash, 'x')]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
      const refused = (results[2] as PromiseRejectedResult).reason;
      expect(refused).toBeInstanceOf(ServiceBusyError);
      expect(refused.retryAfterSeconds).toBe(1);
      expect(pool.queued).toBe(0);
      expect(await pool.verify(hash, 'pw')).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('ends a thread once it has been idle for idleMs, and starts one again for the next task', async () => {
    const pool = new PasswordPool(2, 5, 1, 50);
    try {
      const hash = hashSync('pw', { algorithm: 2, ...cheap });
      const both = Promise.all([pool.verify(hash, 'pw'), pool.verify(hash, 'pw')]);
      expect(pool.liveThreads).toBe(2);
      expect(await both).toEqual([true, true]);
      while (pool.liveThreads > 0) await new Promise((r) => setTimeout(r, 20));
      expect(await pool.verify(hash, 'pw')).toBe(true);
      expect(pool.liveThreads).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('rejects a task argon2 cannot run, and keeps working', async () => {
    const pool = new PasswordPool(1, 5);
    try {
      await expect(pool.verify('not-a-hash', 'pw')).rejects.toThrow();
      expect(await pool.verify(hashSync('pw', { algorithm: 2, ...cheap }), 'pw')).toBe(true);
    } finally {
      await pool.close();
    }
  });
});

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher({ auth: { verifyThreads: 1, verifyQueue: 10 } } as GatewayConfig);
  afterAll(() => hasher.onApplicationShutdown());

  it('hashes with the OWASP argon2id parameters and tells older hashes apart', async () => {
    const hash = await hasher.hash('a-password');
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(ARGON2_PARAMS).toEqual({ memoryCost: 19456, timeCost: 2, parallelism: 1 });
    expect(hasher.needsRehash(hash)).toBe(false);
    expect(hasher.needsRehash('$argon2id$v=19$m=65536,p=4,t=3$c2FsdHNhbHQ$aGFzaA')).toBe(true);
    expect(hasher.needsRehash('$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA')).toBe(true);
    expect(hasher.needsRehash('plain')).toBe(true);
    expect(await hasher.verify(hash, 'a-password')).toBe(true);
    expect(await hasher.verify('garbage', 'a-password')).toBe(false);
  });
});

describe('PasswordHasher.verifyAgainstNothing', () => {
  it('tries again to make its dummy hash when the threads refused it once', async () => {
    const hasher = new PasswordHasher({ auth: { verifyThreads: 1, verifyQueue: 0 } } as GatewayConfig);
    try {
      const busy = hasher.hash('occupies-the-only-thread');
      await expect(hasher.verifyAgainstNothing('a')).rejects.toBeInstanceOf(ServiceBusyError);
      await busy;
      await expect(hasher.verifyAgainstNothing('b')).resolves.toBeUndefined();
    } finally {
      await hasher.onApplicationShutdown();
    }
  });
});
