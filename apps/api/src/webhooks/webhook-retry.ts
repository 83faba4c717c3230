import type { AttemptOutcome } from '@gateway/persistence';

export interface RetryPolicy {
  /** Delay before the first retry; each next one doubles it... */
  baseMs: number;
  /** ...up to this. */
  maxMs: number;
  /** No attempt later than this after the event. */
  windowMs: number;
}

/** Jitter: a delay is shortened by up to this fraction, so endpoints that failed together are not retried together. */
const JITTER = 0.2;

/**
 * When the next attempt is due after `attempts` failed ones (1 = the first failed), or null once that
 * would fall outside the retry window that opened at `eventAt`: the delivery is then given up.
 * Delays: base, 2 × base, 4 × base … up to max, each shortened by up to 20 %.
 */
export function nextAttemptAt(policy: RetryPolicy, attempts: number, eventAt: number, now: number, random: () => number = Math.random): number | null {
  const exponential = policy.baseMs * 2 ** Math.min(attempts - 1, 52);
  const delay = Math.min(policy.maxMs, exponential) * (1 - JITTER * random());
  const at = Math.round(now + delay);
  return at > eventAt + policy.windowMs ? null : at;
}

/**
 * What an answer means: 2xx delivered; 5xx, a time-out or a network error is the endpoint's trouble, retried;
 * anything else (4xx, a redirect) is an answer about the request itself, which another attempt would not change.
 */
export function answerOutcome(statusCode: number | null): 'delivered' | 'retryable' | 'final' {
  if (statusCode === null) return 'retryable';
  if (statusCode >= 200 && statusCode < 300) return 'delivered';
  if (statusCode >= 500) return 'retryable';
  return 'final';
}

/** The attempt's recorded outcome and next attempt. */
export function attemptResult(
  policy: RetryPolicy,
  statusCode: number | null,
  attempts: number,
  eventAt: number,
  now: number,
  random?: () => number,
): { outcome: AttemptOutcome; nextAttemptAt: number | null } {
  const answer = answerOutcome(statusCode);
  if (answer === 'delivered') return { outcome: 'delivered', nextAttemptAt: null };
  if (answer === 'final') return { outcome: 'failed', nextAttemptAt: null };
  const next = nextAttemptAt(policy, attempts, eventAt, now, random);
  return next === null ? { outcome: 'failed', nextAttemptAt: null } : { outcome: 'retry', nextAttemptAt: next };
}
