import { InvalidArgumentError, httpUrlParam, optionalParam, parseSearchSettings, type SearchSettings } from '@gateway/connector-api';

export interface SolrParams {
  /** Base URL, e.g. http://host:8983/solr. */
  url: string;
  user?: string;
  password?: string;
  settings: SearchSettings;
}

/** Validates a solr connector's params: url, collection, user/password (Basic) and the common search settings. */
export function parseSolrParams(params: Record<string, unknown>): SolrParams {
  const settings = parseSearchSettings(params, ['url', 'user', 'password']);
  const user = optionalParam(params, 'user');
  const password = optionalParam(params, 'password');
  if (password !== undefined && user === undefined) throw new InvalidArgumentError('user', 'is required when password is set');
  return { url: httpUrlParam(params, 'url', 'http://host:8983/solr'), user, password, settings };
}
