import {
  ConflictError,
  GatewayError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  UpstreamError,
  UpstreamUnavailableError,
} from '@gateway/connector-api';
import { errnoCode } from './fs-calls';

export { errnoCode } from './fs-calls';

/**
 * Turns a Node filesystem error into a typed gateway error about `identifier`
 * (an id or repository path the client sent). The original message is not
 * passed on because it carries absolute server paths.
 */
export function mapFsError(e: unknown, identifier: string, parameter = 'id'): GatewayError {
  if (e instanceof GatewayError) return e;
  const code = errnoCode(e);
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
    case 'ELOOP': // O_NOFOLLOW met a symbolic link: it is not part of the repository
      return new NotFoundError('item', identifier);
    case 'EEXIST':
    case 'ENOTEMPTY':
      return new ConflictError(`Item '${identifier}' already exists`, 'ALREADY_EXISTS', { id: identifier });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new PermissionDeniedError(`The repository refused access to '${identifier}'`, { id: identifier, reason: code });
    case 'ENAMETOOLONG':
      return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': the name or path is too long`);
    case 'EISDIR':
      return new InvalidArgumentError(parameter, `Invalid parameter '${parameter}': '${identifier}' names a folder, not a document`);
    case 'EMFILE':
    case 'ENFILE':
    case 'EBUSY':
    case 'EAGAIN':
      return new UpstreamUnavailableError(`The repository is busy (${code}); try again`, { id: identifier, reason: code }, e);
    case 'ENOSPC':
    case 'EDQUOT':
      return new UpstreamError('The repository has no space left', { id: identifier, reason: code }, e);
    // The metadata database (better-sqlite3's errors carry SQLite's result code).
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return new UpstreamUnavailableError('The repository metadata is locked by another process; try again', { id: identifier, reason: code }, e);
    case 'SQLITE_FULL':
      return new UpstreamError('The repository has no space left', { id: identifier, reason: code }, e);
    case 'SQLITE_READONLY':
      return new PermissionDeniedError(`The repository refused access to '${identifier}'`, { id: identifier, reason: code });
    case 'EXDEV':
      return new UpstreamError(`'${identifier}' is on another filesystem than the repository root`, { id: identifier, reason: code }, e);
    default:
      return new UpstreamError(`Filesystem error${code ? ` ${code}` : ''} on '${identifier}'`, { id: identifier, ...(code ? { reason: code } : {}) }, e);
  }
}
