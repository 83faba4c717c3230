/**
 * Typed errors thrown by connector drivers and services. They carry no HTTP
 * knowledge: the api's single exception filter maps each kind to a status, so
 * a driver never imports Nest or decides on a status code itself.
 */
export type GatewayErrorKind =
  | 'invalid_argument'
  | 'unauthenticated'
  | 'permission_denied'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'range_not_satisfiable'
  | 'not_supported'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'upstream_throttled'
  | 'upstream_timeout'
  | 'service_busy';

export abstract class GatewayError extends Error {
  abstract readonly kind: GatewayErrorKind;
  /** Stable machine-readable code, e.g. CONNECTOR_NOT_FOUND. */
  readonly code: string;
  /** Extra members copied into the error body (parameter, capability, ...). */
  readonly details: Record<string, unknown>;

  protected constructor(code: string, message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/**
 * The base of the kinds whose code never varies: `new X(message, details?, cause?)`. Each kind is
 * still its own class, so `instanceof` and the error's name tell them apart.
 */
function fixedCode<K extends GatewayErrorKind>(kind: K, code: string) {
  return class extends GatewayError {
    readonly kind: K = kind;
    constructor(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
      super(code, message, details, cause);
    }
  };
}

/** An error the client may retry after `retryAfterSeconds`: the exception filter sends it as Retry-After. */
export abstract class RetryLaterError extends GatewayError {
  protected constructor(
    code: string,
    message: string,
    readonly retryAfterSeconds: number,
    details: Record<string, unknown> = {},
  ) {
    super(code, message, { retryAfterSeconds, ...details });
  }
}

/** The base of the retry-later kinds: `new X(message, retryAfterSeconds, details?)`. */
function retryLater<K extends GatewayErrorKind>(kind: K, code: string) {
  return class extends RetryLaterError {
    readonly kind: K = kind;
    constructor(message: string, retryAfterSeconds: number, details: Record<string, unknown> = {}) {
      super(code, message, retryAfterSeconds, details);
    }
  };
}

/** A request parameter or body member is missing or malformed. */
export class InvalidArgumentError extends GatewayError {
  readonly kind = 'invalid_argument' as const;
  constructor(
    readonly parameter: string,
    message: string,
    code = 'INVALID_PARAMETER',
  ) {
    super(code, message, { parameter });
  }
}

export class UnauthenticatedError extends GatewayError {
  readonly kind = 'unauthenticated' as const;
  constructor(message = 'Authentication required') {
    super('UNAUTHENTICATED', message);
  }
}

export class PermissionDeniedError extends fixedCode('permission_denied', 'PERMISSION_DENIED') {}

/** `resource` names what was missing: connector, item, file, link, user, job... */
export class NotFoundError extends GatewayError {
  readonly kind = 'not_found' as const;
  constructor(
    readonly resource: string,
    readonly identifier: string,
    message?: string,
  ) {
    super(`${resource.toUpperCase()}_NOT_FOUND`, message ?? `${capitalize(resource)} '${identifier}' not found`, {
      resource,
      id: identifier,
    });
  }
}

export class ConflictError extends GatewayError {
  readonly kind = 'conflict' as const;
  constructor(message: string, code = 'CONFLICT', details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

export class GoneError extends GatewayError {
  readonly kind = 'gone' as const;
  constructor(message: string, code = 'GONE', details: Record<string, unknown> = {}) {
    super(code, message, details);
  }
}

export class PayloadTooLargeError extends fixedCode('payload_too_large', 'PAYLOAD_TOO_LARGE') {}

export class UnsupportedMediaTypeError extends fixedCode('unsupported_media_type', 'UNSUPPORTED_MEDIA_TYPE') {}

export class TooManyRequestsError extends retryLater('too_many_requests', 'TOO_MANY_REQUESTS') {}

/** The gateway itself is at capacity for this kind of work (a full queue); the client may retry after the delay. */
export class ServiceBusyError extends retryLater('service_busy', 'SERVICE_BUSY') {}

/** A download's Range lies wholly beyond the content; `size` is what there is to ask for. */
export class RangeNotSatisfiableError extends GatewayError {
  readonly kind = 'range_not_satisfiable' as const;
  constructor(readonly size: number) {
    super('RANGE_NOT_SATISFIABLE', `The requested range cannot be served from ${size} bytes`, { parameter: 'Range', size });
  }
}

/** The connector kind does not offer this operation; `capability` names it. */
export class NotSupportedError extends GatewayError {
  readonly kind = 'not_supported' as const;
  constructor(
    readonly capability: string,
    connectorType: string,
  ) {
    super('NOT_SUPPORTED', `Operation '${capability}' is not supported by connectors of type '${connectorType}'`, {
      capability,
      connectorType,
    });
  }
}

/** The repository or engine answered with an error; its message is passed on. */
export class UpstreamError extends fixedCode('upstream_error', 'UPSTREAM_ERROR') {}

export class UpstreamUnavailableError extends fixedCode('upstream_unavailable', 'UPSTREAM_UNAVAILABLE') {}

export class UpstreamTimeoutError extends fixedCode('upstream_timeout', 'UPSTREAM_TIMEOUT') {}

/**
 * The repository kept throttling (429/503 + Retry-After) after the connector's bounded retries:
 * the gateway passes the wait on (503 + Retry-After) rather than holding the request open.
 */
export class UpstreamThrottledError extends retryLater('upstream_throttled', 'UPSTREAM_THROTTLED') {}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
