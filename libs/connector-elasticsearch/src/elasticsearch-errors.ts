import { errors } from '@elastic/elasticsearch';
import { GatewayError, NotFoundError, UpstreamError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';

interface EsErrorBody {
  error?: { type?: string; reason?: string; root_cause?: { type?: string; reason?: string }[] } | string;
}

/**
 * The client's errors as typed gateway errors. Messages come from the
 * engine's answer or the error class, never from the client's request meta
 * (which carries the Authorization header).
 */
export function mapElasticsearchError(error: unknown, timeoutMs: number, index?: string): unknown {
  if (error instanceof GatewayError) return error;
  if (error instanceof errors.TimeoutError) return new UpstreamTimeoutError(`Elasticsearch did not answer within ${timeoutMs} ms`);
  if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) {
    return new UpstreamUnavailableError(`Elasticsearch cannot be reached (${error.message.replace(/https?:\/\/[^\s]*@/g, '')})`);
  }
  if (error instanceof errors.ResponseError) {
    const status = error.meta.statusCode ?? 0;
    const body = (error.meta.body ?? {}) as EsErrorBody;
    const detail = typeof body.error === 'string' ? { type: undefined, reason: body.error } : (body.error ?? {});
    if (status === 404 && index !== undefined && (detail.type === 'index_not_found_exception' || !detail.type)) {
      return new NotFoundError('collection', index);
    }
    if (status === 401 || status === 403) return new UpstreamError(`Elasticsearch refused the connection's credentials (HTTP ${status})`);
    const cause = detail.root_cause?.[0];
    const reason = cause?.reason ?? detail.reason ?? `HTTP ${status}`;
    const type = cause?.type ?? detail.type;
    return new UpstreamError(`Elasticsearch: ${type ? `${type}: ` : ''}${reason}`, { engineStatus: status });
  }
  if (error instanceof errors.ProductNotSupportedError) return new UpstreamError('The server at url is not Elasticsearch');
  if (error instanceof errors.ElasticsearchClientError) return new UpstreamError(`Elasticsearch client: ${error.name}`);
  return error;
}
