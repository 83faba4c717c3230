import { DEFAULT_RETRY, decideThrottleRetry, retryAfterSeconds } from './retry';

describe('retry policy', () => {
  it('reads Retry-After as seconds or as an HTTP date, and takes the larger of it and RateLimit-Reset', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(retryAfterSeconds({ 'retry-after': '7' }, now)).toBe(7);
    expect(retryAfterSeconds({ 'retry-after': 'Mon, 23 Nov 2026 10:00:31 GMT' }, now)).toBe(31);
    expect(retryAfterSeconds({ 'retry-after': '3', 'ratelimit-reset': '31' }, now)).toBe(31);
    expect(retryAfterSeconds({ 'retry-after': ['12'] }, now)).toBe(12);
    expect(retryAfterSeconds({}, now)).toBeUndefined();
    expect(retryAfterSeconds({ 'retry-after': 'soon' }, now)).toBeUndefined();
  });

  it('waits what the service advises, up to maxRetries times, then gives up passing the wait on', () => {
    const options = { ...DEFAULT_RETRY, maxRetries: 2 };
    expect(decideThrottleRetry(0, 5, options)).toEqual({ retry: true, waitSeconds: 5 });
    expect(decideThrottleRetry(1, 5, options)).toEqual({ retry: true, waitSeconds: 5 });
    expect(decideThrottleRetry(2, 5, options)).toEqual({ retry: false, retryAfterSeconds: 5 });
  });

  it('backs off exponentially without Retry-After', () => {
    const options = { maxRetries: 4, maxWaitSeconds: 60, fallbackWaitSeconds: 1 };
    expect([0, 1, 2, 3].map((a) => decideThrottleRetry(a, undefined, options))).toEqual([
      { retry: true, waitSeconds: 1 },
      { retry: true, waitSeconds: 2 },
      { retry: true, waitSeconds: 4 },
      { retry: true, waitSeconds: 8 },
    ]);
  });

  it('does not sleep through a wait longer than maxWaitSeconds: the caller is told to come back', () => {
    expect(decideThrottleRetry(0, 315, DEFAULT_RETRY)).toEqual({ retry: false, retryAfterSeconds: 315 });
    expect(decideThrottleRetry(0, 0, { ...DEFAULT_RETRY, maxRetries: 0 })).toEqual({ retry: false, retryAfterSeconds: 1 });
  });
});
