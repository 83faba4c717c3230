import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Gateway-Signature';
export const EVENT_ID_HEADER = 'Gateway-Event-Id';
export const EVENT_HEADER = 'Gateway-Event';
export const ATTEMPT_HEADER = 'Gateway-Delivery-Attempt';

/** The hex HMAC-SHA256 of `${timestamp}.${body}` under the webhook's secret (the scheme of Stripe's signatures). */
export function signaturePayloadHmac(secret: string, timestampSeconds: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex');
}

/**
 * The Gateway-Signature header: `t=<unix seconds>,v1=<hex HMAC>`. The timestamp is signed with the body,
 * so a receiver that refuses old timestamps refuses replays; `v1` names the scheme, so another can be
 * added beside it later without breaking receivers.
 */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${signaturePayloadHmac(secret, timestampSeconds, body)}`;
}

/**
 * The receiver's check, as the README's recipe does it: a `v1` signature of this body under `secret`,
 * with a timestamp within `toleranceSeconds` of `nowSeconds`.
 */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((p) => p.split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signaturePayloadHmac(secret, t, body), 'hex');
  return parts
    .filter(([k, v]) => k === 'v1' && v !== undefined && /^[0-9a-f]{64}$/.test(v))
    .some(([, v]) => timingSafeEqual(Buffer.from(v, 'hex'), expected));
}
