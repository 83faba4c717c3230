import { TooManyRequestsError } from '@gateway/connector-api';
import { LoginLockout } from './login-lockout';

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

async function fail(lockout: LoginLockout, times: number, username = 'alice', address = '10.0.0.1'): Promise<boolean[]> {
  const locked: boolean[] = [];
  for (let i = 0; i < times; i++) locked.push(await lockout.recordFailure(username, address));
  return locked;
}

describe('LoginLockout', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('locks a pair out on its maxFailures-th failure, not before', async () => {
    const lockout = new LoginLockout({ maxFailures: 3, lockoutSeconds: 60 });
    expect(await fail(lockout, 2)).toEqual([false, false]);
    expect(lockOf(lockout, 'alice', '10.0.0.1')).toBeUndefined();
    expect(await fail(lockout, 1)).toEqual([true]);
    const lock = lockOf(lockout, 'alice', '10.0.0.1');
    expect(lock).toBeInstanceOf(TooManyRequestsError);
    expect(lock?.retryAfterSeconds).toBe(60);
    expect(lock?.message).toBe('Too many failed logins for this user from this address; retry in 60 s');
  });

  it('locks only that user from that address', async () => {
    const lockout = new LoginLockout({ maxFailures: 1, lockoutSeconds: 60 });
    await fail(lockout, 1, 'a', 'bc');
    expect(lockOf(lockout, 'a', 'bc')).toBeDefined();
    expect(lockOf(lockout, 'a', 'bd')).toBeUndefined();
    expect(lockOf(lockout, 'b', 'bc')).toBeUndefined();
    // The user name and the address stay apart in the key.
    expect(lockOf(lockout, 'ab', 'c')).toBeUndefined();
  });

  it('counts failures per pair', async () => {
    const lockout = new LoginLockout({ maxFailures: 2, lockoutSeconds: 60 });
    expect(await lockout.recordFailure('alice', '10.0.0.1')).toBe(false);
    expect(await lockout.recordFailure('alice', '10.0.0.2')).toBe(false);
    expect(await lockout.recordFailure('bob', '10.0.0.1')).toBe(false);
    expect(lockout.lockCount).toBe(0);
  });

  it('holds the lock for its full length from the failure that set it, rounding the seconds left up', async () => {
    const lockout = new LoginLockout({ maxFailures: 2, lockoutSeconds: 60 });
    await fail(lockout, 1);
    jest.advanceTimersByTime(30_000);
    await fail(lockout, 1);
    jest.advanceTimersByTime(1);
    expect(lockOf(lockout, 'alice', '10.0.0.1')?.retryAfterSeconds).toBe(60);
    jest.advanceTimersByTime(59_998);
    expect(lockOf(lockout, 'alice', '10.0.0.1')?.retryAfterSeconds).toBe(1);
    jest.advanceTimersByTime(1);
    expect(lockOf(lockout, 'alice', '10.0.0.1')).toBeUndefined();
    // An ended lock is dropped when it is next checked.
    expect(lockout.lockCount).toBe(0);
  });

  it('starts the pair afresh when its lock ends', async () => {
    const lockout = new LoginLockout({ maxFailures: 3, lockoutSeconds: 60 });
    await fail(lockout, 3);
    jest.advanceTimersByTime(60_000);
    expect(lockOf(lockout, 'alice', '10.0.0.1')).toBeUndefined();
    expect(await fail(lockout, 3)).toEqual([false, false, true]);
  });

  it('forgets the failures of a pair that logs in successfully', async () => {
    const lockout = new LoginLockout({ maxFailures: 3, lockoutSeconds: 60 });
    await fail(lockout, 2);
    await lockout.recordSuccess('alice', '10.0.0.1');
    expect(await fail(lockout, 2)).toEqual([false, false]);
    expect(lockOf(lockout, 'alice', '10.0.0.1')).toBeUndefined();
  });

  it('counts failures that raced past the lock check as reaching the limit', async () => {
    const lockout = new LoginLockout({ maxFailures: 2, lockoutSeconds: 60 });
    const locked = await Promise.all([1, 2, 3, 4].map(() => lockout.recordFailure('alice', '10.0.0.1')));
    expect(locked).toEqual([false, true, true, true]);
    expect(lockOf(lockout, 'alice', '10.0.0.1')).toBeDefined();
  });

  it('sweeps ended locks once the table reaches its bound', async () => {
    const lockout = new LoginLockout({ maxFailures: 1, lockoutSeconds: 60 }, 2);
    await fail(lockout, 1, 'u1');
    jest.advanceTimersByTime(60_000);
    await fail(lockout, 1, 'u2');
    // Below the bound nothing is swept: u1's ended lock is still held.
    expect(lockout.lockCount).toBe(2);
    await fail(lockout, 1, 'u3');
    // At the bound the ended lock (ending exactly now) goes; u2's and u3's stay.
    expect(lockout.lockCount).toBe(2);
    expect(lockOf(lockout, 'u2', '10.0.0.1')).toBeDefined();
    expect(lockOf(lockout, 'u3', '10.0.0.1')).toBeDefined();
  });
});
