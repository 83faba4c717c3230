import { Client } from '@elastic/elasticsearch';
import { QueryDslConnector, urlEnginePublicParams, type ConnectorDefinition } from '@gateway/connector-api';
import { checkElasticsearchRawQuery, checkElasticsearchTrimmedRawQuery } from '@gateway/search-query';
import { mapElasticsearchError } from './elasticsearch-errors';
import type { ElasticsearchParams } from './params';

/** typeId `elasticsearch`: search and the index group, through the official client (8.x, the server's major). */
export class ElasticsearchConnector extends QueryDslConnector {
  readonly typeId = 'elasticsearch';
  readonly publicParams: Record<string, unknown>;

  constructor(definition: ConnectorDefinition, params: ElasticsearchParams) {
    const { timeoutMs } = params.settings;
    const auth = params.apiKey
      ? { apiKey: params.apiKey }
      : params.user
        ? { username: params.user, password: params.password ?? '' }
        : undefined;
    const client = new Client({
      node: params.url,
      ...(auth ? { auth } : {}),
      requestTimeout: timeoutMs,
      // One node behind one URL: a retry would only double the wait before the same answer.
      maxRetries: 0,
      compression: false,
    });
    super(definition, params.settings, {
      name: 'Elasticsearch',
      client: {
        indexExists: (index) => client.indices.exists({ index }),
        createIndex: (index, body) => client.indices.create({ index, ...body }),
        putMapping: (index, properties) => client.indices.putMapping({ index, properties }),
        answerErrorType: (e) => (e as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type,
        clusterHealth: (index) => client.cluster.health({ index, timeout: '1s' }),
        info: () => client.info(),
        search: (index, body) =>
          client.transport.request<Record<string, unknown>>({ method: 'POST', path: `/${encodeURIComponent(index)}/_search`, body }, { requestTimeout: timeoutMs }),
        bulk: (lines) => client.bulk({ operations: lines }, { requestTimeout: timeoutMs }),
        refresh: (index) => client.indices.refresh({ index }),
        close: () => client.close(),
      },
      mapError: (e, index) => mapElasticsearchError(e, timeoutMs, index),
      checkRawQuery: checkElasticsearchRawQuery,
      checkTrimmedRawQuery: checkElasticsearchTrimmedRawQuery,
    });
    this.publicParams = urlEnginePublicParams(params);
  }
}
