import { TooManyRequestsError } from '@gateway/connector-api';
import { MemoryAttemptStore } from './attempt-store';
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
  return new LoginLockout({ maxFailures: 3, maxFailuresPerAddress: 1000, lockoutSeconds: 60, ...policy }, new MemoryAttemptStore(), sweepAt);
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
});
