import { InvalidArgumentError } from '@gateway/errors';

/** Readers of connector params that every connector kind shares; errors name the param. */

/** A required non-empty string param. */
export function requiredParam(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidArgumentError(name, 'must be a non-empty string');
  return value.trim();
}

/** An optional string param (secrets may be empty only when absent). */
export function optionalParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new InvalidArgumentError(name, 'must be a non-empty string');
  return value;
}

/** An http(s) base URL without credentials, query or fragment, trailing slashes removed. */
export function httpUrlParam(params: Record<string, unknown>, name: string, example: string): string {
  const url = requiredParam(params, name);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError(name, `must be an absolute http(s) URL, e.g. ${example}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidArgumentError(name, 'must be an http or https URL');
  if (parsed.username || parsed.password) throw new InvalidArgumentError(name, 'must not carry credentials; use user and password');
  if (parsed.search || parsed.hash) throw new InvalidArgumentError(name, 'must not have a query or fragment');
  return url.replace(/\/+$/, '');
}

/** An optional integer param within [min, max] (a string of digits is accepted, as YAML and env interpolation give). */
export function integerParam(params: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = params[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(name, `must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** Refuses a key that is none of `known`: a misspelt parameter would otherwise be ignored, silently. */
export function refuseUnknownParams(params: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(params)) {
    if (!known.includes(key)) throw new InvalidArgumentError(key, `unknown parameter (known: ${known.join(', ')})`);
  }
}
