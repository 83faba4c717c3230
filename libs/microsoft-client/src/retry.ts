/**
 * The retry policy of the Microsoft connectors, as pure functions so it is unit-tested without a clock.
 * SharePoint and Graph throttle with 429 or 503 and a Retry-After (seconds, sometimes an HTTP date);
 * SharePoint may add the IETF draft RateLimit-Reset, and Microsoft says to honour the larger of the two.
 */

export interface RetryOptions {
  /** Retries after the first attempt for throttling answers (429/503). */
  maxRetries: number;
  /** A single wait longer than this is not slept through: the gateway answers 503 + Retry-After at once. */
  maxWaitSeconds: number;
  /** Wait used when a 429/503 carries no Retry-After; doubled per attempt. */
  fallbackWaitSeconds: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 4, maxWaitSeconds: 60, fallbackWaitSeconds: 1 };

type HeaderValue = string | string[] | number | undefined;

function first(v: HeaderValue): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v[0] : String(v);
}

/** Seconds to wait from Retry-After (delta-seconds or HTTP-date) and RateLimit-Reset, the larger; undefined if neither. */
export function retryAfterSeconds(headers: Record<string, HeaderValue>, now: number = Date.now()): number | undefined {
  const candidates: number[] = [];
  const ra = first(headers['retry-after'])?.trim();
  if (ra) {
    if (/^\d+$/.test(ra)) candidates.push(Number(ra));
    else {
      const at = Date.parse(ra);
      if (!Number.isNaN(at)) candidates.push(Math.max(0, Math.ceil((at - now) / 1000)));
    }
  }
  const reset = first(headers['ratelimit-reset'])?.trim();
  if (reset && /^\d+$/.test(reset)) candidates.push(Number(reset));
  return candidates.length ? Math.max(...candidates) : undefined;
}

export function isThrottle(status: number): boolean {
  return status === 429 || status === 503;
}

export type RetryDecision = { retry: true; waitSeconds: number } | { retry: false; retryAfterSeconds: number };

/**
 * After a throttling answer on attempt `attempt` (0 = the first try): wait and retry, or give up
 * with the Retry-After to pass on. Giving up early when the service asks for a longer wait than
 * maxWaitSeconds keeps a gateway request from hanging for minutes (Retry-After of 300 s is seen).
 */
export function decideThrottleRetry(attempt: number, advisedSeconds: number | undefined, options: RetryOptions): RetryDecision {
  const wait = advisedSeconds ?? options.fallbackWaitSeconds * 2 ** attempt;
  if (attempt >= options.maxRetries || wait > options.maxWaitSeconds) {
    return { retry: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }
  return { retry: true, waitSeconds: wait };
}
