import { InvalidArgumentError, httpUrlParam, optionalParam, parseSearchSettings, type SearchSettings } from '@gateway/connector-api';

export interface SolrParams {
  /** Base URL, e.g. http://host:8983/solr. */
  url: string;
  user?: string;
  password?: string;
  /** Configset a missing core is created from by the index group (default `_default`). */
  configSet: string;
  settings: SearchSettings;
}

/** Validates a solr connector's params: url, collection, user/password (Basic) and the common search settings. */
export function parseSolrParams(params: Record<string, unknown>): SolrParams {
  const settings = parseSearchSettings(params, ['url', 'user', 'password', 'configSet']);
  const user = optionalParam(params, 'user');
  const password = optionalParam(params, 'password');
  if (password !== undefined && user === undefined) throw new InvalidArgumentError('user', 'is required when password is set');
  const configSet = optionalParam(params, 'configSet') ?? '_default';
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/.test(configSet)) throw new InvalidArgumentError('configSet', 'must be a configset name (letters, digits, . _ -; not starting with . or -)');
  return { url: httpUrlParam(params, 'url', 'http://host:8983/solr'), user, password, configSet, settings };
}
