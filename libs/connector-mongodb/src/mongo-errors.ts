import {
  GatewayError,
  NotFoundError,
  UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '@gateway/connector-api';
import {
  MongoError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
} from 'mongodb';

/** MaxTimeMSExpired: the server stopped the operation at maxTimeMS. */
const MAX_TIME_EXPIRED = 50;
const NAMESPACE_NOT_FOUND = 26;

/**
 * The driver's errors as typed gateway errors. A server that cannot be
 * selected because its connection timed out is a time-out (504); refused or
 * reset connections are unavailability (503).
 */
export function mapMongoError(error: unknown, timeoutMs: number, collection?: string): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof MongoServerSelectionError) {
    const servers = [...(error.reason?.servers?.values() ?? [])];
    if (servers.some((s) => s.error instanceof MongoNetworkTimeoutError)) {
      return new UpstreamTimeoutError(`MongoDB did not answer within ${timeoutMs} ms`);
    }
    const cause = servers.map((s) => s.error?.message).find(Boolean);
    return new UpstreamUnavailableError(`MongoDB cannot be reached${cause ? ` (${cause})` : ''}`);
  }
  if (error instanceof MongoNetworkTimeoutError) return new UpstreamTimeoutError(`MongoDB did not answer within ${timeoutMs} ms`);
  if (error instanceof MongoNetworkError) return new UpstreamUnavailableError(`MongoDB connection failed (${error.message})`);
  if (error instanceof MongoServerError) {
    if (error.code === MAX_TIME_EXPIRED) return new UpstreamTimeoutError(`MongoDB did not finish within ${timeoutMs} ms`);
    if (error.code === NAMESPACE_NOT_FOUND && collection !== undefined) return new NotFoundError('collection', collection);
    return new UpstreamError(`MongoDB: ${error.message}`, { engineCode: error.code });
  }
  if (error instanceof MongoError) {
    if (/Topology|ServerSelection|Network/.test(error.name)) return new UpstreamUnavailableError(`MongoDB cannot be reached (${error.name})`);
    if (error.name === 'MongoOperationTimeoutError') return new UpstreamTimeoutError(`MongoDB did not answer within ${timeoutMs} ms`);
    return new UpstreamError(`MongoDB: ${error.message}`);
  }
  return error;
}
