import { errors } from '@elastic/elasticsearch';
import { GatewayError, UpstreamError, queryDslAnswerError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';

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
  if (error instanceof errors.ResponseError) return queryDslAnswerError('Elasticsearch', error.meta.statusCode ?? 0, error.meta.body, index);
  if (error instanceof errors.ProductNotSupportedError) return new UpstreamError('The server at url is not Elasticsearch');
  if (error instanceof errors.ElasticsearchClientError) return new UpstreamError(`Elasticsearch client: ${error.name}`);
  return error;
}
