import { answerOutcome, attemptResult, nextAttemptAt, type RetryPolicy } from './webhook-retry';

const HOUR = 3_600_000;
const policy: RetryPolicy = { baseMs: 10_000, maxMs: HOUR, windowMs: 24 * HOUR };

describe('webhook retries', () => {
  it('doubles the delay from the base up to the cap', () => {
    const noJitter = () => 0;
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20].map((n) => nextAttemptAt(policy, n, 0, 0, noJitter));
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, HOUR, HOUR]);
  });

  it('shortens a delay by at most a fifth (jitter), never beyond the cap', () => {
    expect(nextAttemptAt(policy, 1, 0, 1000, () => 0.999_999)).toBe(1000 + 8000);
    expect(nextAttemptAt(policy, 30, 0, 0, () => 0.5)).toBe(0.9 * HOUR);
  });

  it('gives up once the next attempt would fall more than 24 h after the event', () => {
    const noJitter = () => 0;
    expect(nextAttemptAt(policy, 12, 0, 23 * HOUR, noJitter)).toBe(24 * HOUR);
    expect(nextAttemptAt(policy, 12, 0, 23 * HOUR + 1, noJitter)).toBeNull();
    // Over a whole day of failures the attempts stay inside the window and then stop.
    let now = 0;
    let attempts = 0;
    for (;;) {
      attempts++;
      const next = nextAttemptAt(policy, attempts, 0, now, noJitter);
      if (next === null) break;
      now = next;
    }
    expect(now).toBeLessThanOrEqual(24 * HOUR);
    expect(attempts).toBe(32);
  });

  it('retries 5xx and no answer, not 4xx or redirects', () => {
    expect([200, 204, 299].map(answerOutcome)).toEqual(['delivered', 'delivered', 'delivered']);
    expect([500, 502, 503, 504, null].map(answerOutcome)).toEqual(['retryable', 'retryable', 'retryable', 'retryable', 'retryable']);
    expect([400, 401, 404, 410, 422, 301, 302].map(answerOutcome)).toEqual(['final', 'final', 'final', 'final', 'final', 'final', 'final']);
    expect(attemptResult(policy, 410, 1, 0, 5, () => 0)).toEqual({ outcome: 'failed', nextAttemptAt: null });
    expect(attemptResult(policy, 503, 1, 0, 5, () => 0)).toEqual({ outcome: 'retry', nextAttemptAt: 10_005 });
    expect(attemptResult(policy, null, 40, 0, 24 * HOUR, () => 0)).toEqual({ outcome: 'failed', nextAttemptAt: null });
    expect(attemptResult(policy, 200, 3, 0, 5)).toEqual({ outcome: 'delivered', nextAttemptAt: null });
  });
});
