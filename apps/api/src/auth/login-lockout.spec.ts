import { createServer, type AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { TooManyRequestsError, UpstreamUnavailableError } from '@gateway/connector-api';
import { inProcessRateLimiter, redisRateLimiterFactory, type RateLimit } from '../coordination/rate-limiter';
import { LoginLockout, type LockoutPolicy } from './login-lockout';

/** The error assertNotLockedOut throws for the pair, or undefined when the pair may log in. */
function lockOf(lockout: LoginLockout, username: string, address: string): TooManyRequestsError | undefined {
  try {
    lockout.assertNotLockedOut(username, address);
    return undefined;
  } catch (e) {
    if (e instanceof TooManyRequestsError) return e;
    throw e;
  }
}

/** One whole failed attempt: reserved, then failed. Returns whether it locked the pair, or the refusal. */
async function attempt(lockout: LoginLockout, username = 'alice', address = '10.0.0.1'): Promise<boolean | TooManyRequestsError> {
  try {
    await lockout.reserve(username, address);
  } catch (e) {
    if (e instanceof TooManyRequestsError) return e;
    throw e;
  }
  return lockout.recordFailure(username, address);
}

async function fail(lockout: LoginLockout, times: number, username = 'alice', address = '10.0.0.1'): Promise<Array<boolean | string>> {
  const outcomes: Array<boolean | string> = [];
  for (let i = 0; i < times; i++) {
    const outcome = await attempt(lockout, username, address);
    outcomes.push(outcome instanceof TooManyRequestsError ? 'refused' : outcome);
  }
  return outcomes;
}

function lockout(policy: Partial<LockoutPolicy>, sweepAt?: number): LoginLockout {
  return new LoginLockout({ maxFailures: 3, maxFailuresPerAddress: 1000, lockoutSeconds: 60, ...policy }, undefined, sweepAt);
}

describe('LoginLockout', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('locks a pair out on its maxFailures-th failure, and refuses the next attempt before it is evaluated', async () => {
    const l = lockout({ maxFailures: 3 });
    expect(await fail(l, 2)).toEqual([false, false]);
    expect(lockOf(l, 'alice', '10.0.0.1')).toBeUndefined();
    expect(await fail(l, 2)).toEqual([true, 'refused']);
    const lock = lockOf(l, 'alice', '10.0.0.1');
    expect(lock).toBeInstanceOf(TooManyRequestsError);
    expect(lock?.retryAfterSeconds).toBe(60);
    expect(lock?.message).toBe('Too many failed logins for this user from this address; retry in 60 s');
    await expect(l.reserve('alice', '10.0.0.1')).rejects.toThrow('Too many failed logins for this user from this address; retry in 60 s');
  });

  it('lets no more than maxFailures of N parallel attempts through to evaluation', async () => {
    const l = lockout({ maxFailures: 10 });
    const reserved = await Promise.allSettled(Array.from({ length: 50 }, () => l.reserve('alice', '10.0.0.1')));
    expect(reserved.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
    expect(reserved.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof TooManyRequestsError)).toBe(true);
  });

  it('locks only that user from that address', async () => {
    const l = lockout({ maxFailures: 1 });
    await fail(l, 1, 'a', 'bc');
    expect(lockOf(l, 'a', 'bc')).toBeDefined();
    expect(lockOf(l, 'a', 'bd')).toBeUndefined();
    expect(lockOf(l, 'b', 'bc')).toBeUndefined();
    // The user name and the address stay apart in the key.
    expect(lockOf(l, 'ab', 'c')).toBeUndefined();
    await expect(l.reserve('b', 'bc')).resolves.toBeUndefined();
  });

  it('counts failures from one address across user names, and refuses the address past its own limit', async () => {
    const l = lockout({ maxFailures: 3, maxFailuresPerAddress: 4 });
    for (const name of ['u1', 'u2', 'u3', 'u4']) expect(await fail(l, 1, name)).toEqual([false]);
    const refused = await attempt(l, 'u5');
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect((refused as TooManyRequestsError).message).toBe('Too many failed logins from this address; retry in 60 s');
    // Another address is not concerned.
    expect(await fail(l, 1, 'u5', '10.0.0.2')).toEqual([false]);
  });

  it('holds the lock for its full length from the failure that set it, rounding the seconds left up', async () => {
    const l = lockout({ maxFailures: 2 });
    await fail(l, 1);
    jest.advanceTimersByTime(30_000);
    await fail(l, 1);
    jest.advanceTimersByTime(1);
    expect(lockOf(l, 'alice', '10.0.0.1')?.retryAfterSeconds).toBe(60);
    jest.advanceTimersByTime(59_998);
    expect(lockOf(l, 'alice', '10.0.0.1')?.retryAfterSeconds).toBe(1);
    jest.advanceTimersByTime(1);
    expect(lockOf(l, 'alice', '10.0.0.1')).toBeUndefined();
    expect(l.lockCount).toBe(0);
  });

  it('starts the pair afresh when its lock ends', async () => {
    const l = lockout({ maxFailures: 3 });
    await fail(l, 3);
    jest.advanceTimersByTime(60_000);
    expect(lockOf(l, 'alice', '10.0.0.1')).toBeUndefined();
    expect(await fail(l, 3)).toEqual([false, false, true]);
  });

  it('forgets the failures of a pair that logs in successfully, and gives an unevaluated attempt back', async () => {
    const l = lockout({ maxFailures: 3 });
    await fail(l, 2);
    await l.reserve('alice', '10.0.0.1');
    await l.recordSuccess('alice', '10.0.0.1');
    expect(await fail(l, 2)).toEqual([false, false]);
    await l.reserve('alice', '10.0.0.1');
    await l.release('alice', '10.0.0.1');
    expect(await fail(l, 1)).toEqual([true]);
  });

  it('takes locks announced by other nodes', () => {
    const l = lockout({});
    l.noteLock('alice', '10.0.0.1', Date.now() + 5000);
    expect(lockOf(l, 'alice', '10.0.0.1')?.retryAfterSeconds).toBe(5);
    expect(lockOf(l, 'bob', '10.0.0.1')).toBeUndefined();
  });

  it('sweeps ended locks once the table reaches its bound', async () => {
    const l = lockout({ maxFailures: 1 }, 2);
    await fail(l, 1, 'u1');
    jest.advanceTimersByTime(60_000);
    await fail(l, 1, 'u2');
    expect(l.lockCount).toBe(2);
    await fail(l, 1, 'u3');
    expect(l.lockCount).toBe(2);
    expect(lockOf(l, 'u2', '10.0.0.1')).toBeDefined();
    expect(lockOf(l, 'u3', '10.0.0.1')).toBeDefined();
  });

  it('does not count on the address the attempts a locked pair refuses', async () => {
    const l = lockout({ maxFailures: 2, maxFailuresPerAddress: 4 });
    expect(await fail(l, 5)).toEqual([false, true, 'refused', 'refused', 'refused']);
    expect(await fail(l, 3, 'bob')).toEqual([false, true, 'refused']);
  });

  it('gives the pair its attempt back when the address refuses it', async () => {
    const l = lockout({ maxFailures: 2, maxFailuresPerAddress: 3 });
    const others = ['u1', 'u2', 'u3'];
    for (const name of others) await l.reserve(name, '10.0.0.1');
    expect(await attempt(l, 'alice')).toBeInstanceOf(TooManyRequestsError);
    for (const name of others) await l.release(name, '10.0.0.1');
    // Both of alice's attempts are left: the refused one was not counted on her.
    expect(await fail(l, 2, 'alice')).toEqual([false, true]);
  });

  it('gives back into a window that ended nothing below zero', async () => {
    const l = lockout({ maxFailures: 2, maxFailuresPerAddress: 2 });
    await l.reserve('alice', '10.0.0.1');
    jest.advanceTimersByTime(60_000);
    await l.release('alice', '10.0.0.1');
    expect(await fail(l, 3)).toEqual([false, true, 'refused']);
    jest.advanceTimersByTime(60_000);
    await l.reserve('alice', '10.0.0.1');
    jest.advanceTimersByTime(60_000);
    await l.recordSuccess('alice', '10.0.0.1');
    const outcomes = [];
    for (const name of ['u1', 'u2', 'u3']) outcomes.push(...(await fail(l, 1, name)));
    expect(outcomes).toEqual([false, false, 'refused']);
  });

  it('keeps a window opened by an attempt given back: it ends a lock-out length after that attempt', async () => {
    const l = lockout({ maxFailures: 2 });
    await l.reserve('alice', '10.0.0.1');
    jest.advanceTimersByTime(50_000);
    await l.release('alice', '10.0.0.1');
    expect(await fail(l, 1)).toEqual([false]);
    jest.advanceTimersByTime(10_000);
    expect(await fail(l, 1)).toEqual([false]);
  });

  it('asks for two limits named apart, with the policy\'s numbers', () => {
    const limits: RateLimit[] = [];
    new LoginLockout({ maxFailures: 3, maxFailuresPerAddress: 7, lockoutSeconds: 60 }, (limit) => {
      limits.push(limit);
      return inProcessRateLimiter(limit);
    });
    expect(limits).toEqual([
      { name: 'login-pair', points: 3, durationSeconds: 60 },
      { name: 'login-address', points: 7, durationSeconds: 60 },
    ]);
  });

  it('locks the address at its limit for the lock-out length from its last failure', async () => {
    const l = lockout({ maxFailures: 10, maxFailuresPerAddress: 2 });
    await fail(l, 1, 'u1');
    jest.advanceTimersByTime(30_000);
    expect(await fail(l, 1, 'u2')).toEqual([false]);
    jest.advanceTimersByTime(59_000);
    const refused = await attempt(l, 'u3');
    expect((refused as TooManyRequestsError).retryAfterSeconds).toBe(1);
  });
});

describe('LoginLockout without its store', () => {
  let redis: Redis;
  beforeAll(async () => {
    // A port nothing listens on, and no offline queue: every command fails at once, as with Redis down.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const { port } = closed.address() as AddressInfo;
    await new Promise((r) => closed.close(r));
    redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  });
  afterAll(() => redis.disconnect());

  const policy = { maxFailures: 2, maxFailuresPerAddress: 10, lockoutSeconds: 60 };
  const unavailable = expect.objectContaining({
    constructor: UpstreamUnavailableError,
    message: expect.stringMatching(/^The login lock-out store \(Redis\) is unavailable: .+/),
  });

  it('fails closed with UpstreamUnavailableError when Redis does not answer, at every step', async () => {
    const l = new LoginLockout(policy, redisRateLimiterFactory(redis, 'test:'));
    await expect(l.reserve('alice', '10.0.0.1')).rejects.toEqual(unavailable);
    await expect(l.recordFailure('alice', '10.0.0.1')).rejects.toEqual(unavailable);
    await expect(l.recordSuccess('alice', '10.0.0.1')).rejects.toEqual(unavailable);
    await expect(l.release('alice', '10.0.0.1')).rejects.toEqual(unavailable);
  });

  it('gives the pair its attempt back when the address counter does not answer', async () => {
    // Two lock-outs sharing one pair counter; the first one's address counter is in the unreachable Redis.
    const pairs = inProcessRateLimiter({ name: 'login-pair', points: policy.maxFailures, durationSeconds: policy.lockoutSeconds });
    const sharingPairs = (addresses: (limit: RateLimit) => ReturnType<typeof inProcessRateLimiter>) => (limit: RateLimit) =>
      limit.name === 'login-pair' ? pairs : addresses(limit);
    const broken = new LoginLockout(policy, sharingPairs(redisRateLimiterFactory(redis, 'test:')));
    await expect(broken.reserve('alice', '10.0.0.1')).rejects.toEqual(unavailable);
    const working = new LoginLockout(policy, sharingPairs(inProcessRateLimiter));
    expect(await fail(working, 2)).toEqual([false, true]);
  });
});
