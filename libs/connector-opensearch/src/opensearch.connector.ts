import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Client } from '@opensearch-project/opensearch';
import {
  UpstreamError,
  queryDslIndexBody,
  queryDslIndexGroup,
  queryDslIndexProperties,
  queryDslResults,
  type ConnectorDefinition,
  type SearchResults,
  EngineConnector,
  INDEX_DEFAULTS,
  urlEnginePublicParams,
  type IndexCapability,
} from '@gateway/connector-api';
import { checkOpenSearchRawQuery, checkOpenSearchTrimmedRawQuery, toElasticsearchRequest, trimElasticsearchBody, type SearchRequest } from '@gateway/search-query';
import { mapOpenSearchError } from './opensearch-errors';
import type { OpenSearchParams } from './params';

/**
 * typeId `opensearch`: search and the index group, through the official client. OpenSearch speaks the
 * Query DSL Elasticsearch speaks, so requests are built and trimmed by search-query's Elasticsearch
 * translator; raw bodies go through OpenSearch's own guards.
 */
export class OpenSearchConnector extends EngineConnector {
  readonly typeId = 'opensearch';
  protected readonly rawQueryBody = 'an OpenSearch _search request body (a JSON object)';
  readonly publicParams: Record<string, unknown>;
  private readonly client: Client;
  readonly index: IndexCapability;

  constructor(definition: ConnectorDefinition, private readonly params: OpenSearchParams) {
    super(definition, params.settings);
    const { settings } = params;
    this.publicParams = urlEnginePublicParams(params);
    this.client = new Client({
      node: params.url,
      ...(params.user ? { auth: { username: params.user, password: params.password ?? '' } } : {}),
      // Node's roots stay trusted beside the connection's own CA.
      ...(params.caFile ? { ssl: { ca: [...rootCertificates, readFileSync(params.caFile, 'utf8')] } } : {}),
      requestTimeout: settings.timeoutMs,
      // One node behind one URL: a retry would only double the wait before the same answer.
      maxRetries: 0,
    });
    const timeoutMs = settings.timeoutMs;
    this.index = queryDslIndexGroup(
      'OpenSearch',
      {
        ensureIndex: (index) => this.ensureIndex(index),
        bulk: async (lines) => (await this.client.bulk({ body: lines as never }, { requestTimeout: timeoutMs })).body,
        refresh: async (index) => void (await this.client.indices.refresh({ index })),
      },
      (e, index) => mapOpenSearchError(e, timeoutMs, index),
    );
  }

  /** An explicit mapping (keywords for facets, dynamic template for prop_*); the refresh interval is commitWithinMs. */
  private async ensureIndex(index: string): Promise<void> {
    if ((await this.client.indices.exists({ index })).body) {
      // Adding fields to an existing mapping is allowed; a field already mapped otherwise is refused by the engine (kept as its error).
      await this.client.indices.putMapping({ index, body: { properties: queryDslIndexProperties() } });
      return;
    }
    const refresh = this.params.settings.commitWithinMs ?? INDEX_DEFAULTS.commitWithinMs;
    try {
      await this.client.indices.create({ index, body: queryDslIndexBody(refresh) });
    } catch (e) {
      // Another node created it between exists and create: the same mapping, so done.
      if ((e as { body?: { error?: { type?: string } } }).body?.error?.type !== 'resource_already_exists_exception') throw e;
    }
  }

  async checkHealth(): Promise<void> {
    const index = this.params.settings.collection;
    try {
      if (index) {
        const exists = (await this.client.indices.exists({ index })).body;
        if (!exists) throw new UpstreamError(`OpenSearch has no index '${index}' (the connection's collection)`);
        await this.client.cluster.health({ index, timeout: '1s' });
      } else {
        await this.client.info();
      }
    } catch (e) {
      throw mapOpenSearchError(e, this.params.settings.timeoutMs, index);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  protected async select(index: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults> {
    const body = principals ? trimElasticsearchBody(toElasticsearchRequest(request), principals) : toElasticsearchRequest(request);
    return queryDslResults(await this.searchIndex(index, body), request);
  }

  /** The body goes to <index>/_search only, its size capped at maxRows. */
  protected async rawQuery(index: string, input: Record<string, unknown>, principals?: readonly string[]): Promise<unknown> {
    checkOpenSearchRawQuery(input);
    if (principals) checkOpenSearchTrimmedRawQuery(input);
    const size = typeof input.size === 'number' && input.size >= 0 ? Math.floor(input.size) : 10;
    const body = { ...input, size: Math.min(size, this.params.settings.maxRows) };
    return this.searchIndex(index, principals ? trimElasticsearchBody(body, principals) : body);
  }

  /** POST /<index>/_search with exactly this body (the transport: no body member moves to the query string). */
  private async searchIndex(index: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      const answer = await this.client.transport.request(
        { method: 'POST', path: `/${encodeURIComponent(index)}/_search`, body },
        { requestTimeout: this.params.settings.timeoutMs },
      );
      return answer.body as Record<string, unknown>;
    } catch (e) {
      throw mapOpenSearchError(e, this.params.settings.timeoutMs, index);
    }
  }
}
