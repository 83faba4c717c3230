import { InvalidArgumentError, NotFoundError } from './errors';

/**
 * What an upstream repository's refusal means where every remote driver (CMIS, SharePoint, Graph)
 * reads it the same way; each driver's error mapper still decides which answer is which.
 * `said` is the server's own message as `: <message>`, or '' when it gave none.
 */
export function serverSaid(message: string | undefined): string {
  const trimmed = (message ?? '').trim();
  return trimmed ? `: ${trimmed}` : '';
}

/** The item the call named is not there (without an id the server's words are all there is). */
export function upstreamNotFound(id: string | undefined, said: string): NotFoundError {
  return new NotFoundError('item', id ?? '', id === undefined ? `Not found${said}` : undefined);
}

/** The repository refused one of the client's parameters the call passed on: the client's fault (400). */
export function refusedParameter(parameter: string, said: string, repository: string): InvalidArgumentError {
  return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}'${said || `: refused by ${repository}`}`);
}
