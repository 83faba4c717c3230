import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Client } from '@opensearch-project/opensearch';
import { QueryDslConnector, urlEnginePublicParams, type ConnectorDefinition } from '@gateway/connector-api';
import { checkOpenSearchRawQuery, checkOpenSearchTrimmedRawQuery } from '@gateway/search-query';
import { mapOpenSearchError } from './opensearch-errors';
import type { OpenSearchParams } from './params';

/**
 * typeId `opensearch`: search and the index group, through the official client. OpenSearch speaks the
 * Query DSL Elasticsearch speaks, so requests are built and trimmed by search-query's Elasticsearch
 * translator; raw bodies go through OpenSearch's own guards.
 */
export class OpenSearchConnector extends QueryDslConnector {
  readonly typeId = 'opensearch';
  readonly publicParams: Record<string, unknown>;

  constructor(definition: ConnectorDefinition, params: OpenSearchParams) {
    const { timeoutMs } = params.settings;
    const client = new Client({
      node: params.url,
      ...(params.user ? { auth: { username: params.user, password: params.password ?? '' } } : {}),
      // Node's roots stay trusted beside the connection's own CA.
      ...(params.caFile ? { ssl: { ca: [...rootCertificates, readFileSync(params.caFile, 'utf8')] } } : {}),
      requestTimeout: timeoutMs,
      // One node behind one URL: a retry would only double the wait before the same answer.
      maxRetries: 0,
    });
    super(definition, params.settings, {
      name: 'OpenSearch',
      client: {
        indexExists: async (index) => (await client.indices.exists({ index })).body,
        createIndex: (index, body) => client.indices.create({ index, body }),
        putMapping: (index, properties) => client.indices.putMapping({ index, body: { properties } }),
        answerErrorType: (e) => (e as { body?: { error?: { type?: string } } }).body?.error?.type,
        clusterHealth: (index) => client.cluster.health({ index, timeout: '1s' }),
        info: () => client.info(),
        search: async (index, body) =>
          (await client.transport.request({ method: 'POST', path: `/${encodeURIComponent(index)}/_search`, body }, { requestTimeout: timeoutMs }))
            .body as Record<string, unknown>,
        bulk: async (lines) => (await client.bulk({ body: lines as never }, { requestTimeout: timeoutMs })).body,
        refresh: (index) => client.indices.refresh({ index }),
        close: () => client.close(),
      },
      mapError: (e, index) => mapOpenSearchError(e, timeoutMs, index),
      checkRawQuery: checkOpenSearchRawQuery,
      checkTrimmedRawQuery: checkOpenSearchTrimmedRawQuery,
    });
    this.publicParams = urlEnginePublicParams(params);
  }
}
