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
  | 'upstream_timeout';

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

export class PermissionDeniedError extends GatewayError {
  readonly kind = 'permission_denied' as const;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('PERMISSION_DENIED', message, details);
  }
}

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

export class PayloadTooLargeError extends GatewayError {
  readonly kind = 'payload_too_large' as const;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('PAYLOAD_TOO_LARGE', message, details);
  }
}

export class UnsupportedMediaTypeError extends GatewayError {
  readonly kind = 'unsupported_media_type' as const;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('UNSUPPORTED_MEDIA_TYPE', message, details);
  }
}

export class TooManyRequestsError extends GatewayError {
  readonly kind = 'too_many_requests' as const;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('TOO_MANY_REQUESTS', message, { retryAfterSeconds });
  }
}

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
export class UpstreamError extends GatewayError {
  readonly kind = 'upstream_error' as const;
  constructor(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super('UPSTREAM_ERROR', message, details, cause);
  }
}

export class UpstreamUnavailableError extends GatewayError {
  readonly kind = 'upstream_unavailable' as const;
  constructor(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super('UPSTREAM_UNAVAILABLE', message, details, cause);
  }
}

export class UpstreamTimeoutError extends GatewayError {
  readonly kind = 'upstream_timeout' as const;
  constructor(message: string, details: Record<string, unknown> = {}, cause?: unknown) {
    super('UPSTREAM_TIMEOUT', message, details, cause);
  }
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
