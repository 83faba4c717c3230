import { errors, type ApiResponse } from '@opensearch-project/opensearch';
import { NotFoundError, UpstreamError, UpstreamTimeoutError, UpstreamUnavailableError } from '@gateway/connector-api';
import { mapOpenSearchError } from './opensearch-errors';

function meta(statusCode: number | null, body: unknown): ApiResponse {
  return { body, statusCode, headers: {}, warnings: null, meta: {} } as unknown as ApiResponse;
}

function responseError(statusCode: number, body: unknown): errors.ResponseError {
  return new errors.ResponseError(meta(statusCode, body));
}

describe('mapOpenSearchError', () => {
  it('is 404 naming the collection for an unknown index', () => {
    const mapped = mapOpenSearchError(responseError(404, { error: { type: 'index_not_found_exception', reason: 'no such index [x]' }, status: 404 }), 1000, 'x');
    expect(mapped).toBeInstanceOf(NotFoundError);
    expect((mapped as Error).message).toContain('x');
  });

  it('says the credentials were refused on 401 and 403, without the engine text', () => {
    for (const status of [401, 403]) {
      const mapped = mapOpenSearchError(responseError(status, { error: 'Unauthorized' }), 1000, 'x') as Error;
      expect(mapped).toBeInstanceOf(UpstreamError);
      expect(mapped.message).toBe(`OpenSearch refused the connection's credentials (HTTP ${status})`);
    }
  });

  it('passes other answers on with the root cause type and reason', () => {
    const body = { error: { type: 'search_phase_execution_exception', reason: 'all shards failed', root_cause: [{ type: 'query_shard_exception', reason: 'failed to create query' }] }, status: 400 };
    const mapped = mapOpenSearchError(responseError(400, body), 1000, 'x') as UpstreamError;
    expect(mapped).toBeInstanceOf(UpstreamError);
    expect(mapped.message).toBe('OpenSearch: query_shard_exception: failed to create query');
  });

  it('is 504 for a time-out and 503 for a connection error, the URL credentials left out', () => {
    expect(mapOpenSearchError(new errors.TimeoutError('Request timed out', meta(null, undefined)), 2500)).toEqual(new UpstreamTimeoutError('OpenSearch did not answer within 2500 ms'));
    const unreachable = mapOpenSearchError(new errors.ConnectionError('connect ECONNREFUSED http://user:secret@127.0.0.1:1/'), 1000) as Error;
    expect(unreachable).toBeInstanceOf(UpstreamUnavailableError);
    expect(unreachable.message).not.toContain('secret');
  });

  it('leaves gateway errors and foreign errors as they are', () => {
    const own = new UpstreamError('x');
    expect(mapOpenSearchError(own, 1000)).toBe(own);
    const foreign = new TypeError('y');
    expect(mapOpenSearchError(foreign, 1000)).toBe(foreign);
  });
});
