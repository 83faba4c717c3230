import { Client } from '@elastic/elasticsearch';
import {
  UpstreamError,
  facetValue,
  resultDocument,
  sortBuckets,
  type ConnectorDefinition,
  type SearchResults,
  EngineConnector,
  urlEnginePublicParams,
} from '@gateway/connector-api';
import { checkElasticsearchRawQuery, toElasticsearchRequest, type SearchRequest } from '@gateway/search-query';
import { mapElasticsearchError } from './elasticsearch-errors';
import type { ElasticsearchParams } from './params';

interface Hit {
  _id: string;
  _source?: Record<string, unknown>;
}

interface TermsAggregation {
  buckets?: { key: string | number; key_as_string?: string; doc_count: number }[];
}

/** typeId `elasticsearch`: search only, through the official client (8.x, the server's major). */
export class ElasticsearchConnector extends EngineConnector {
  readonly typeId = 'elasticsearch';
  protected readonly rawQueryBody = 'an Elasticsearch _search request body (a JSON object)';
  readonly publicParams: Record<string, unknown>;
  private readonly client: Client;

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

  protected async select(index: string, request: SearchRequest): Promise<SearchResults> {
    const body = toElasticsearchRequest(request);
    const answer = await this.searchIndex(index, body);
    const hits = (answer.hits ?? {}) as { total?: { value?: number } | number; hits?: Hit[] };
    const total = typeof hits.total === 'number' ? hits.total : (hits.total?.value ?? 0);
    const results: SearchResults = {
      numFound: total,
      start: request.start,
      rows: request.rows,
      docs: (hits.hits ?? []).map((hit) => {
        const source = hit._source ?? {};
        return resultDocument(source.id ?? hit._id, source, request.schema, request.fields);
      }),
    };
    if (request.facetFields && request.facetFields.length > 0) {
      const aggregations = (answer.aggregations ?? {}) as Record<string, TermsAggregation>;
      results.facets = Object.fromEntries(
        request.facetFields.map((field) => [
          field,
          sortBuckets(
            (aggregations[field]?.buckets ?? []).map((b) => ({
              value: facetValue(request.schema[field] === 'date' ? b.key : (b.key_as_string ?? b.key), request.schema[field]),
              count: b.doc_count,
            })),
          ),
        ]),
      );
    }
    return results;
  }

  /** The body goes to <index>/_search only, its size capped at maxRows. */
  protected async rawQuery(index: string, input: Record<string, unknown>): Promise<unknown> {
    checkElasticsearchRawQuery(input);
    const size = typeof input.size === 'number' && input.size >= 0 ? Math.floor(input.size) : 10;
    return this.searchIndex(index, { ...input, size: Math.min(size, this.params.settings.maxRows) });
  }

  /** POST /<index>/_search with exactly this body (the transport, so no body member is moved to the query string). */
  private async searchIndex(index: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    try {
      return (await this.client.transport.request(
        { method: 'POST', path: `/${encodeURIComponent(index)}/_search`, body },
        { requestTimeout: this.params.settings.timeoutMs },
      )) as Record<string, unknown>;
    } catch (e) {
      throw mapElasticsearchError(e, this.params.settings.timeoutMs, index);
    }
  }
}
