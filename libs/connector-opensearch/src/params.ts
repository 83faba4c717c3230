import * as fs from 'node:fs';
import { InvalidArgumentError, httpUrlParam, optionalParam, parseSearchSettings, type SearchSettings } from '@gateway/connector-api';

export interface OpenSearchParams {
  url: string;
  user?: string;
  password?: string;
  /** PEM file of a CA trusted besides Node's own (a private or corporate CA). */
  caFile?: string;
  settings: SearchSettings;
}

/** Validates an opensearch connector's params: url, collection (index), user/password, caFile, common search settings. */
export function parseOpenSearchParams(params: Record<string, unknown>): OpenSearchParams {
  const settings = parseSearchSettings(params, ['url', 'user', 'password', 'caFile']);
  const url = httpUrlParam(params, 'url', 'https://host:9200');
  const user = optionalParam(params, 'user');
  const password = optionalParam(params, 'password');
  const caFile = optionalParam(params, 'caFile');
  if (password !== undefined && user === undefined) throw new InvalidArgumentError('user', 'is required when password is set');
  if (user !== undefined && password === undefined) throw new InvalidArgumentError('password', 'is required when user is set');
  if (caFile !== undefined) {
    if (!url.startsWith('https:')) throw new InvalidArgumentError('caFile', 'applies to an https url only');
    if (!fs.existsSync(caFile)) throw new InvalidArgumentError('caFile', `no file at ${caFile}`);
  }
  return { url, user, password, caFile, settings };
}
