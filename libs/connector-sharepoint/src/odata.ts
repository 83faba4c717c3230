import { UpstreamError } from '@gateway/connector-api';

/**
 * Reading SharePoint's JSON in any of its formats — verbose (`d`, `d.results`, `d.__next`), minimal
 * and no metadata (`value`, `odata.nextLink`) — and writing OData literals into URLs.
 */
export type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The entity of a single-entity answer, unwrapped from verbose `d` if present. */
export function readEntity(body: unknown): Json {
  if (!isRecord(body)) throw new UpstreamError('SharePoint sent an answer that is not an entity');
  return isRecord(body.d) ? body.d : body;
}

/** The entities and the next page's URL of a collection answer. */
export function readCollection(body: unknown): { items: Json[]; next?: string } {
  if (!isRecord(body)) throw new UpstreamError('SharePoint sent an answer that is not a collection');
  const d = isRecord(body.d) ? body.d : undefined;
  const raw = d ? d.results : body.value;
  if (!Array.isArray(raw)) throw new UpstreamError('SharePoint sent a collection without results/value');
  const next = d ? d.__next : body['odata.nextLink'];
  return { items: raw.filter(isRecord), ...(typeof next === 'string' && next !== '' ? { next } : {}) };
}

/** A navigation property expanded in the answer (verbose wraps collections in `results`), or undefined when deferred. */
export function expanded(entity: Json, name: string): Json | Json[] | undefined {
  const v = entity[name];
  if (Array.isArray(v)) return v.filter(isRecord);
  if (!isRecord(v)) return undefined;
  if (v.__deferred) return undefined;
  if (Array.isArray(v.results)) return v.results.filter(isRecord);
  return v;
}

/** A primitive method answer: verbose `{"d":{"StartUpload":"10"}}`, light `{"value":"10"}`. */
export function readPrimitive(body: unknown, method: string): unknown {
  if (!isRecord(body)) return undefined;
  if (isRecord(body.d)) return body.d[method];
  return body.value;
}

/** An OData string literal: quotes doubled. */
export function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** A query string with parameter aliases, every value percent-encoded (spaces as %20, not +). */
export function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k.startsWith('@') || k.startsWith('$') ? k : encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

export function str(entity: Json, name: string): string | undefined {
  const v = entity[name];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** The Accept header of every call: JSON without OData metadata. */
export const ACCEPT = 'application/json;odata=nometadata';

export function date(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}
