import { InvalidArgumentError, httpUrlParam, optionalParam, parseSearchSettings, type SearchSettings } from '@gateway/connector-api';

export interface ElasticsearchParams {
  url: string;
  user?: string;
  password?: string;
  apiKey?: string;
  settings: SearchSettings;
}

/** Validates an elasticsearch connector's params: url, collection (index), user/password or apiKey, common search settings. */
export function parseElasticsearchParams(params: Record<string, unknown>): ElasticsearchParams {
  const settings = parseSearchSettings(params, ['url', 'user', 'password', 'apiKey']);
  const user = optionalParam(params, 'user');
  const password = optionalParam(params, 'password');
  const apiKey = optionalParam(params, 'apiKey');
  if (password !== undefined && user === undefined) throw new InvalidArgumentError('user', 'is required when password is set');
  if (apiKey !== undefined && user !== undefined) throw new InvalidArgumentError('apiKey', 'use either apiKey or user/password, not both');
  return { url: httpUrlParam(params, 'url', 'http://host:9200'), user, password, apiKey, settings };
}
