import { Client } from '@elastic/elasticsearch';
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
import { checkElasticsearchRawQuery, checkElasticsearchTrimmedRawQuery, toElasticsearchRequest, trimElasticsearchBody, type SearchRequest } from '@gateway/search-query';
import { mapElasticsearchError } from './elasticsearch-errors';
import type { ElasticsearchParams } from './params';

/** typeId `elasticsearch`: search only, through the official client (8.x, the server's major). */
export class ElasticsearchConnector extends EngineConnector {
  readonly typeId = 'elasticsearch';
  protected readonly rawQueryBody = 'an Elasticsearch _search request body (a JSON object)';
  readonly publicParams: Record<string, unknown>;
  private readonly client: Client;
  readonly index: IndexCapability;

  constructor(definition: ConnectorDefinition, private readonly params: ElasticsearchParams) {
    super(definition, params.settings);
    const { settings } = params;
    this.publicParams = urlEnginePublicParams(params);
    const auth = params.apiKey
      ? { apiKey: params.apiKey }
      : params.user
        ? { username: params.user, password: params.password ?? '' }
        : undefined;
    this.client = new Client({
      node: params.url,
      ...(auth ? { auth } : {}),
      requestTimeout: settings.timeoutMs,
      // One node behind one URL: a retry would only double the wait before the same answer.
      maxRetries: 0,
      compression: false,
    });
    const timeoutMs = settings.timeoutMs;
    this.index = queryDslIndexGroup(
      'Elasticsearch',
      {
        ensureIndex: (index) => this.ensureIndex(index),
        bulk: (lines) => this.client.bulk({ operations: lines }, { requestTimeout: timeoutMs }),
        refresh: async (index) => void (await this.client.indices.refresh({ index })),
      },
      (e, index) => mapElasticsearchError(e, timeoutMs, index),
    );
  }

  /** An explicit mapping (keywords for facets, dynamic template for prop_*); the refresh interval is commitWithinMs. */
  private async ensureIndex(index: string): Promise<void> {
    if (await this.client.indices.exists({ index })) {
      // Adding fields to an existing mapping is allowed; a field already mapped otherwise is refused by the engine (kept as its error).
      await this.client.indices.putMapping({ index, properties: queryDslIndexProperties() });
      return;
    }
    const refresh = this.params.settings.commitWithinMs ?? INDEX_DEFAULTS.commitWithinMs;
    try {
      await this.client.indices.create({ index, ...queryDslIndexBody(refresh) });
    } catch (e) {
      // Another node created it between exists and create: the same mapping, so done.
      if ((e as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type !== 'resource_already_exists_exception') throw e;
    }
  }

  async checkHealth(): Promise<void> {
    const index = this.params.settings.collection;
    try {
      if (index) {
        const exists = await this.client.indices.exists({ index });
        if (!exists) throw new UpstreamError(`Elasticsearch has no index '${index}' (the connection's collection)`);
        await this.client.cluster.health({ index, timeout: '1s' });
      } else {
        await this.client.info();
      }
    } catch (e) {
      throw mapElasticsearchError(e, this.params.settings.timeoutMs, index);
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
    checkElasticsearchRawQuery(input);
    if (principals) checkElasticsearchTrimmedRawQuery(input);
    const size = typeof input.size === 'number' && input.size >= 0 ? Math.floor(input.size) : 10;
    const body = { ...input, size: Math.min(size, this.params.settings.maxRows) };
    return this.searchIndex(index, principals ? trimElasticsearchBody(body, principals) : body);
  }

  /** POST /<index>/_search with exactly this body (the transport, so no body member is moved to the query string). */
  private async searchIndex(index: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return await this.client.transport.request<Record<string, unknown>>(
        { method: 'POST', path: `/${encodeURIComponent(index)}/_search`, body },
        { requestTimeout: this.params.settings.timeoutMs },
      );
    } catch (e) {
      throw mapElasticsearchError(e, this.params.settings.timeoutMs, index);
    }
  }
}
