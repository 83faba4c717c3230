import {
  ConflictError,
  GatewayError,
  NotSupportedError,
  PermissionDeniedError,
  UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  refusedParameter,
  serverSaid,
  upstreamNotFound,
} from '@gateway/connector-api';

/** What a failed browser-binding call said: the HTTP status and, when the body was CMIS JSON, its exception. */
export interface CmisFailure {
  status: number;
  /** The CMIS exception name (objectNotFound, updateConflict, ...), when the server sent one. */
  exception?: string;
  message?: string;
}

/** What the caller was doing, so an error can name the right thing. */
export interface CmisErrorContext {
  /** The id or path the client sent. */
  id?: string;
  /** The request parameter an invalidArgument is blamed on; without one, invalidArgument is the server's problem (502). */
  parameter?: string;
  /** The capability name a notSupported answer is reported as (e.g. 'checkOut'). */
  capability?: string;
  /** The CMIS user the call was made as. */
  user?: string;
}

const CONFLICT_CODES: Record<string, string> = {
  updateConflict: 'UPDATE_CONFLICT',
  versioning: 'VERSIONING_CONFLICT',
  contentAlreadyExists: 'CONTENT_ALREADY_EXISTS',
  nameConstraintViolation: 'ALREADY_EXISTS',
};

/** Thrown when the server is too slow; mapped to UpstreamTimeoutError. */
export class CmisTimeout extends Error {
  constructor(readonly ms: number) {
    super(`The CMIS repository did not answer within ${ms} ms`);
  }
}

/** A CMIS exception (browser binding JSON `{exception, message}`) as a typed gateway error. */
export function mapCmisFailure(failure: CmisFailure, context: CmisErrorContext = {}): GatewayError {
  const serverMessage = (failure.message ?? '').trim();
  const said = serverSaid(serverMessage);
  switch (failure.exception) {
    case 'objectNotFound':
      return upstreamNotFound(context.id, said);
    case 'updateConflict':
    case 'versioning':
    case 'contentAlreadyExists':
    case 'nameConstraintViolation':
      return new ConflictError(serverMessage || `The repository refused the change (${failure.exception})`, CONFLICT_CODES[failure.exception], {
        ...(context.id !== undefined ? { id: context.id } : {}),
        cmisException: failure.exception,
      });
    case 'permissionDenied':
      return new PermissionDeniedError(`The repository denied the operation${said}`, {
        ...(context.id !== undefined ? { id: context.id } : {}),
        ...(context.user !== undefined ? { cmisUser: context.user } : {}),
      });
    case 'invalidArgument':
      if (context.parameter !== undefined) return refusedParameter(context.parameter, said, 'the repository');
      return new UpstreamError(`The CMIS repository refused the request (invalidArgument)${said}`, { cmisException: failure.exception });
    case 'notSupported':
      return new NotSupportedError(context.capability ?? 'operation', 'cmis');
    case undefined:
      break;
    default:
      return new UpstreamError(`The CMIS repository failed (${failure.exception})${said}`, { cmisException: failure.exception });
  }
  // No CMIS exception in the body: go by the HTTP status.
  if (failure.status === 401) {
    return new PermissionDeniedError(`The repository refused the credentials of CMIS user '${context.user ?? '?'}'`, {
      ...(context.user !== undefined ? { cmisUser: context.user } : {}),
    });
  }
  if (failure.status === 404) return upstreamNotFound(context.id, said);
  if (failure.status === 503) return new UpstreamUnavailableError(`The CMIS repository is unavailable (HTTP 503)${said}`);
  return new UpstreamError(`The CMIS repository answered HTTP ${failure.status}${said}`, { status: failure.status });
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** The errno-style code of a fetch failure (undici puts the socket error in `cause`). */
export function networkCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    const errors = (cur as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = networkCode(errors[0]);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** A transport failure (no HTTP answer) as a typed error. */
export function mapTransportError(e: unknown, baseUrl: string): GatewayError {
  if (e instanceof GatewayError) return e;
  if (e instanceof CmisTimeout || hasCause(e, CmisTimeout)) {
    const timeout = e instanceof CmisTimeout ? e : findCause(e, CmisTimeout)!;
    return new UpstreamTimeoutError(timeout.message, { url: baseUrl, timeoutMs: timeout.ms }, e);
  }
  const code = networkCode(e);
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'ETIMEDOUT') {
    return new UpstreamTimeoutError(`The CMIS repository at ${baseUrl} timed out (${code})`, { url: baseUrl }, e);
  }
  if (code === undefined || UNREACHABLE.has(code)) {
    return new UpstreamUnavailableError(`The CMIS repository at ${baseUrl} cannot be reached${code ? ` (${code})` : ''}`, { url: baseUrl, ...(code ? { reason: code } : {}) }, e);
  }
  return new UpstreamUnavailableError(`The CMIS repository at ${baseUrl} cannot be reached (${code})`, { url: baseUrl, reason: code }, e);
}

function findCause<T>(e: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    if (cur instanceof type) return cur;
  }
  return undefined;
}

function hasCause(e: unknown, type: abstract new (...args: never[]) => unknown): boolean {
  return findCause(e, type) !== undefined;
}
