import { InvalidArgumentError, integerParam, refuseUnknownParams, requiredParam } from '@gateway/connector-api';

/**
 * Who the repository sees as the author of a change:
 * - `technical`: every call is made as the configured `user`. The repository
 *   then knows one user only: check-out holders, authors and ACL checks are
 *   that user's, whichever gateway user acted.
 * - `actor`: changes (uploads, updates, check-out/in, deletes, ACL changes)
 *   are made with the acting gateway user's name as the CMIS user name (and
 *   the configured password). For repositories that trust the gateway to
 *   authenticate (OpenCMIS InMemory takes the Basic user name as the CMIS user
 *   and checks no password; a repository behind an authenticating proxy).
 *   Check-out ownership, authorship and the repository's permission checks
 *   then follow the gateway user. Reads always use the configured user.
 */
export type UserMapping = 'technical' | 'actor';

export interface CmisParams {
  /** Browser binding service URL, without a trailing slash. */
  url: string;
  repositoryId: string;
  user: string;
  password: string;
  timeoutMs: number;
  pageSize: number;
  userMapping: UserMapping;
  documentType: string;
}

export const DEFAULTS = {
  timeoutMs: 30_000,
  pageSize: 100,
  userMapping: 'technical' as UserMapping,
  documentType: 'cmis:document',
};

const KNOWN = ['url', 'repositoryId', 'user', 'password', 'timeoutMs', 'pageSize', 'userMapping', 'documentType'];

/** Validates the `params` of a cmis connector definition; errors name the parameter. */
export function parseParams(params: Record<string, unknown>): CmisParams {
  refuseUnknownParams(params, KNOWN);
  const url = requiredParam(params, 'url');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError('url', 'must be the absolute http(s) URL of the CMIS browser binding, e.g. http://host:8080/cmis/browser');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidArgumentError('url', 'must be an http or https URL');
  if (parsed.username || parsed.password) throw new InvalidArgumentError('url', 'must not carry credentials; use user and password');
  if (parsed.search || parsed.hash) throw new InvalidArgumentError('url', 'must not have a query or fragment');
  const userMapping = params.userMapping ?? DEFAULTS.userMapping;
  if (userMapping !== 'technical' && userMapping !== 'actor') throw new InvalidArgumentError('userMapping', "must be 'technical' or 'actor'");
  const password = params.password;
  if (typeof password !== 'string') throw new InvalidArgumentError('password', 'must be a string (use ${VAR} to take it from the environment)');
  return {
    url: url.replace(/\/+$/, ''),
    repositoryId: requiredParam(params, 'repositoryId'),
    user: requiredParam(params, 'user'),
    password,
    timeoutMs: integerParam(params, 'timeoutMs', DEFAULTS.timeoutMs, 100, 3_600_000),
    pageSize: integerParam(params, 'pageSize', DEFAULTS.pageSize, 1, 10_000),
    userMapping,
    documentType: params.documentType === undefined ? DEFAULTS.documentType : requiredParam(params, 'documentType'),
  };
}
