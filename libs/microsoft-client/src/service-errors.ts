import {
  ConflictError,
  GatewayError,
  NotSupportedError,
  PermissionDeniedError,
  UpstreamError,
  UpstreamThrottledError,
  UpstreamUnavailableError,
  refusedParameter,
  serverSaid,
  upstreamNotFound,
} from '@gateway/errors';

/**
 * What a failed SharePoint REST or Graph call said. The three body shapes:
 * - SharePoint JSON light: `{"odata.error":{"code":"-2130575338, Microsoft.SharePoint.SPException","message":{"lang":"en-US","value":"..."}}}`
 * - SharePoint verbose:    `{"error":{"code":"-2147024894, System.IO.FileNotFoundException","message":{"lang":"en-US","value":"..."}}}`
 * - Graph:                 `{"error":{"code":"nameAlreadyExists","message":"...","innerError":{"code":"...","innerError":{...}}}}`
 */
export interface ServiceFailure {
  status: number;
  /** Graph error code, or SharePoint's "<HRESULT>, <.NET exception type>". */
  code?: string;
  /** Graph's nested innerError codes, outermost first. */
  innerCodes: string[];
  message?: string;
  /** From Retry-After / RateLimit-Reset when the answer carried them. */
  retryAfterSeconds?: number;
}

export interface ServiceErrorContext {
  /** 'SharePoint' or 'Microsoft Graph': named in messages. */
  service: string;
  /** The gateway id or path of the item the call was about. */
  id?: string;
  /** The gateway parameter a 400 is blamed on; without one a 400 is the connector's fault (502). */
  parameter?: string;
  /** The capability name a 501 is reported as. */
  capability?: string;
  connectorType?: string;
}

function asRecord(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Reads any of the three error shapes; a body that is not JSON (an HTML error page) gives status only. */
export function parseServiceError(status: number, body: string, retryAfter?: number): ServiceFailure {
  const failure: ServiceFailure = { status, innerCodes: [], ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}) };
  let json: Record<string, unknown> | undefined;
  try {
    json = asRecord(JSON.parse(body));
  } catch {
    return failure;
  }
  const err = asRecord(json?.['odata.error']) ?? asRecord(json?.error) ?? asRecord(asRecord(json?.d)?.error);
  if (!err) return failure;
  if (typeof err.code === 'string') failure.code = err.code;
  const msg = err.message;
  if (typeof msg === 'string') failure.message = msg;
  else if (typeof asRecord(msg)?.value === 'string') failure.message = asRecord(msg)!.value as string;
  let inner = asRecord(err.innerError) ?? asRecord(err.innererror);
  for (let depth = 0; inner && depth < 10; depth++) {
    if (typeof inner.code === 'string') failure.innerCodes.push(inner.code);
    inner = asRecord(inner.innerError) ?? asRecord(inner.innererror);
  }
  return failure;
}

/** SharePoint's codes are "<HRESULT>, <type>"; these are the ones that change the mapping. */
const SP_ALREADY_EXISTS = ['-2130575257', '-2147024713', '-2130245363']; // SPException "already exists", ERROR_FILE_EXISTS, SPDuplicateValuesFoundException
const SP_LOCKED_TYPES = ['SPFileLockException', 'SPFileCheckOutException', 'SPLockException'];
const SP_NOT_FOUND = ['-2147024894', '-2147024893', 'FileNotFoundException', 'DirectoryNotFoundException'];

function hasCode(failure: ServiceFailure, codes: string[]): boolean {
  const all = [failure.code ?? '', ...failure.innerCodes];
  return all.some((c) => codes.some((k) => c === k || c.startsWith(`${k},`) || c.endsWith(`.${k}`) || c.includes(`, ${k}`)));
}

/** A service error as the gateway's typed error; the exception filter then picks the status. */
export function mapServiceError(failure: ServiceFailure, context: ServiceErrorContext): GatewayError {
  const said = serverSaid(failure.message);
  const codeDetail = failure.code ? { upstreamCode: failure.code } : {};
  const idDetail = context.id !== undefined ? { id: context.id } : {};
  const { status } = failure;

  if (status === 429 || status === 503) {
    return new UpstreamThrottledError(`${context.service} is throttling the gateway; retry later${said}`, failure.retryAfterSeconds ?? 1, { upstreamStatus: status });
  }
  if (status === 404 || hasCode(failure, ['itemNotFound', ...SP_NOT_FOUND])) {
    return upstreamNotFound(context.id, said);
  }
  if (hasCode(failure, ['nameAlreadyExists', ...SP_ALREADY_EXISTS])) {
    return new ConflictError(`An item with that name already exists${said}`, 'ALREADY_EXISTS', { ...idDetail, ...codeDetail });
  }
  if (status === 423 || hasCode(failure, ['resourceLocked', 'locked', ...SP_LOCKED_TYPES])) {
    return new ConflictError(`The item is locked or checked out by someone else${said}`, 'LOCKED', { ...idDetail, ...codeDetail });
  }
  if (status === 412 || hasCode(failure, ['resourceModified', 'entityTagDoesNotMatch'])) {
    // The gateway's own conditional request lost a race with another writer: a conflict for the gateway's user.
    return new ConflictError(`The item changed meanwhile${said}`, 'PRECONDITION_FAILED', { ...idDetail, ...codeDetail });
  }
  if (status === 409) return new ConflictError(`${context.service} refused the change${said}`, 'CONFLICT', { ...idDetail, ...codeDetail });
  if (status === 403) return new PermissionDeniedError(`${context.service} denied the operation${said}`, { ...idDetail, ...codeDetail });
  if (status === 401) {
    // The gateway's own credentials were refused (after one token refresh): a configuration fault upstream.
    return new UpstreamError(`${context.service} refused the connector's credentials${said}`, { upstreamStatus: 401, ...codeDetail });
  }
  if (status === 400 && context.parameter !== undefined) {
    return refusedParameter(context.parameter, said, context.service);
  }
  if (status === 501 || hasCode(failure, ['notSupported'])) return new NotSupportedError(context.capability ?? 'operation', context.connectorType ?? context.service);
  if (status === 502 || status === 504) {
    return new UpstreamUnavailableError(`${context.service} is unavailable (HTTP ${status})${said}`, { upstreamStatus: status, ...codeDetail });
  }
  return new UpstreamError(`${context.service} failed (HTTP ${status})${said}`, { upstreamStatus: status, ...codeDetail });
}
