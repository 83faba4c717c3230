import { errors } from '@opensearch-project/opensearch';
import { GatewayError, NotFoundError, UpstreamError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';

interface OpenSearchErrorBody {
  error?: { type?: string; reason?: string; root_cause?: { type?: string; reason?: string }[] } | string;
}

/**
 * The client's errors as typed gateway errors. Messages come from the engine's answer or the error
 * class, never from the client's request meta (which carries the Authorization header).
 */
export function mapOpenSearchError(error: unknown, timeoutMs: number, index?: string): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof errors.TimeoutError) return new UpstreamTimeoutError(`OpenSearch did not answer within ${timeoutMs} ms`);
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) {
    return new UpstreamUnavailableError(`OpenSearch cannot be reached (${error.message.replace(/https?:\/\/[^\s]*@/g, '')})`);
  }
  if (error instanceof errors.ResponseError) {
    const status = error.statusCode ?? 0;
    const body = (error.body ?? {}) as OpenSearchErrorBody;
    const detail = typeof body.error === 'string' ? { type: undefined, reason: body.error } : (body.error ?? {});
    if (status === 404 && index !== undefined && (detail.type === 'index_not_found_exception' || !detail.type)) {
      return new NotFoundError('collection', index);
    }
    if (status === 401 || status === 403) return new UpstreamError(`OpenSearch refused the connection's credentials (HTTP ${status})`);
    const cause = detail.root_cause?.[0];
    const reason = cause?.reason ?? detail.reason ?? `HTTP ${status}`;
    const type = cause?.type ?? detail.type;
    return new UpstreamError(`OpenSearch: ${type ? `${type}: ` : ''}${reason}`, { engineStatus: status });
  }
  if (error instanceof errors.OpenSearchClientError) return new UpstreamError(`OpenSearch client: ${error.name}`);
  return error;
}
