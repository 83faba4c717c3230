import type { ClaimedDelivery } from '@gateway/persistence';
import { ATTEMPT_HEADER, EVENT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signatureHeader } from './webhook-signature';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The JSON body of an event: the same bytes on every attempt (only the signature's timestamp changes).
 * `data` is the run as the event found it.
 */
export function webhookBody(delivery: Pick<ClaimedDelivery, 'eventId' | 'event' | 'createdAt' | 'data'>): string {
  const { jobName, run } = delivery.data;
  return JSON.stringify({
    id: delivery.eventId,
    type: delivery.event,
    createdAt: iso(delivery.createdAt),
    data: {
      jobId: run.jobId,
      jobName,
      runId: run.id,
      runNumber: run.runNumber,
      kind: run.kind,
      dryRun: run.dryRun === true,
      attempt: run.attempt,
      status: run.status,
      message: run.message,
      startTime: iso(run.startTime),
      endTime: iso(run.endTime),
      counters: { read: run.read, written: run.written, skipped: run.skipped, failed: run.failed, removed: run.removed },
      total: run.discovered,
      bytesWritten: run.bytesWritten,
    },
  });
}

/** The headers of one attempt, signed at `nowSeconds`. */
export function webhookHeaders(delivery: Pick<ClaimedDelivery, 'eventId' | 'event' | 'secret'>, body: string, attempt: number, nowSeconds: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': 'content-gateway-webhooks/1',
    [EVENT_ID_HEADER]: delivery.eventId,
    [EVENT_HEADER]: delivery.event,
    [ATTEMPT_HEADER]: String(attempt),
    [SIGNATURE_HEADER]: signatureHeader(delivery.secret, nowSeconds, body),
  };
}
