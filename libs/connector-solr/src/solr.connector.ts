import {
  facetValue,
  resultDocument,
  sortBuckets,
  type ConnectorDefinition,
  type FacetBucket,
  type SearchResults,
  EngineConnector,
  urlEnginePublicParams,
} from '@gateway/connector-api';
import { checkSolrRawQuery, toSolrRequest, type SearchRequest } from '@gateway/search-query';
import { SolrClient } from './solr-client';
import type { SolrParams } from './params';

/** Top-level members of Solr's JSON request API; a body with none of them is taken as bare params. */
const JSON_REQUEST_KEYS = ['query', 'filter', 'offset', 'limit', 'fields', 'sort', 'facet', 'params', 'queries'];

interface SolrSelectAnswer {
  response?: { numFound?: number; start?: number; docs?: Record<string, unknown>[] };
  facet_counts?: { facet_fields?: Record<string, (string | number)[]> };
}

/** typeId `solr`: search only (no content operations), over Solr's JSON request API. */
export class SolrConnector extends EngineConnector {
  readonly typeId = 'solr';
  protected readonly rawQueryBody = 'a Solr JSON request or a params object';
  readonly publicParams: Record<string, unknown>;
  private readonly client: SolrClient;

  constructor(definition: ConnectorDefinition, private readonly params: SolrParams) {
    super(definition, params.settings);
    const { settings } = params;
    this.publicParams = urlEnginePublicParams(params);
    this.client = new SolrClient({ url: params.url, user: params.user, password: params.password, timeoutMs: settings.timeoutMs });
  }

  async checkHealth(): Promise<void> {
    const collection = this.params.settings.collection;
    if (collection) await this.client.get(`${encodeURIComponent(collection)}/admin/ping?wt=json`, collection);
    else await this.client.get('admin/info/system?wt=json');
  }

  async close(): Promise<void> {
    this.client.close();
  }

  protected async select(collection: string, request: SearchRequest): Promise<SearchResults> {
    const answer = (await this.client.postJson(collection, 'select', toSolrRequest(request))) as SolrSelectAnswer;
    const response = answer.response ?? {};
    const results: SearchResults = {
      numFound: response.numFound ?? 0,
      start: request.start,
      rows: request.rows,
      docs: (response.docs ?? []).map((doc) => resultDocument(doc.id, doc, request.schema, request.fields)),
    };
    if (request.facetFields && request.facetFields.length > 0) {
      const fields = answer.facet_counts?.facet_fields ?? {};
      results.facets = Object.fromEntries(
        request.facetFields.map((field) => [field, sortBuckets(pairs(fields[field] ?? [], request.schema[field]))]),
      );
    }
    return results;
  }

  /** The body goes to <collection>/select only, as JSON, capped at maxRows. */
  protected async rawQuery(collection: string, input: Record<string, unknown>): Promise<unknown> {
    checkSolrRawQuery(input);
    const isJsonRequest = Object.keys(input).some((key) => JSON_REQUEST_KEYS.includes(key));
    const request: Record<string, unknown> = isJsonRequest ? { ...input } : { params: input };
    const params = { ...((request.params as Record<string, unknown> | undefined) ?? {}) };
    const max = this.params.settings.maxRows;
    params.wt = 'json';
    params.rows = Math.min(intOr(params.rows, 10), max);
    if (request.limit !== undefined) request.limit = Math.min(intOr(request.limit, 10), max);
    request.params = params;
    return this.client.postJson(collection, 'select', request);
  }
}

function intOr(value: unknown, fallback: number): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

/** Solr's facet list [value, count, value, count, ...] as buckets. */
function pairs(list: (string | number)[], type: string | undefined): FacetBucket[] {
  const buckets: FacetBucket[] = [];
  for (let i = 0; i + 1 < list.length; i += 2) buckets.push({ value: facetValue(list[i], type), count: Number(list[i + 1]) });
  return buckets;
}
