import { errors } from '@opensearch-project/opensearch';
import { GatewayError, UpstreamError, queryDslAnswerError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';

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
  if (error instanceof errors.ResponseError) return queryDslAnswerError('OpenSearch', error.statusCode ?? 0, error.body, index);
  if (error instanceof errors.OpenSearchClientError) return new UpstreamError(`OpenSearch client: ${error.name}`);
  return error;
}
