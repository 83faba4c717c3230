import { InvalidArgumentError, parseSearchSettings, requiredParam, type SearchSettings } from '@gateway/connector-api';

export interface MongoParams {
  /** mongodb:// or mongodb+srv:// connection string (may hold credentials: never shown). */
  uri: string;
  database: string;
  settings: SearchSettings;
}

/** Validates a mongodb connector's params: uri, database, collection, common search settings. */
export function parseMongoParams(params: Record<string, unknown>): MongoParams {
  const settings = parseSearchSettings(params, ['uri', 'database']);
  const uri = requiredParam(params, 'uri');
  if (!/^mongodb(\+srv)?:\/\//.test(uri)) throw new InvalidArgumentError('uri', 'must be a mongodb:// or mongodb+srv:// connection string');
  const database = requiredParam(params, 'database');
  if (/[/\\. "$]/.test(database)) throw new InvalidArgumentError('database', 'must be a database name (no / \\ . space " $)');
  return { uri, database, settings };
}

/** The connection string with its password (and every query option's value that could be a secret) left out. */
export function redactUri(uri: string): string {
  return uri.replace(/^(mongodb(?:\+srv)?:\/\/)([^@/]*@)/, (_all, scheme: string, userInfo: string) => {
    const user = userInfo.slice(0, -1).split(':')[0];
    return `${scheme}${user}:***@`;
  }).replace(/([?&](?:password|authMechanismProperties|tlsCertificateKeyFilePassword)=)[^&]*/gi, '$1***');
}
