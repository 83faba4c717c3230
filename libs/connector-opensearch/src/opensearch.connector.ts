import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { Client } from '@opensearch-project/opensearch';
import {
  UpstreamError,
  facetValue,
  resultDocument,
  sortBuckets,
  type ConnectorDefinition,
  type SearchResults,
  EngineConnector,
  INDEX_DEFAULTS,
  INDEX_FIELDS,
  INDEX_PROPERTY_PREFIX,
  urlEnginePublicParams,
  type IndexCapability,
  type IndexFieldType,
} from '@gateway/connector-api';
import { checkOpenSearchRawQuery, checkOpenSearchTrimmedRawQuery, toElasticsearchRequest, trimElasticsearchBody, type SearchRequest } from '@gateway/search-query';
import { mapOpenSearchError } from './opensearch-errors';
import type { OpenSearchParams } from './params';

interface Hit {
  _id: string;
  _source?: Record<string, unknown>;
}

interface TermsAggregation {
  buckets?: { key: string | number; key_as_string?: string; doc_count: number }[];
}

type BulkItem = Record<string, { _id?: string | null; status?: number; error?: { type?: string; reason?: string | null } }>;

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
    const guard = async <T>(index: string, call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (e) {
        throw mapOpenSearchError(e, timeoutMs, index);
      }
    };
    this.index = {
      ensureCollection: (index) => guard(index, () => this.ensureIndex(index)),
      write: (index, documents) =>
        guard(index, async () => {
          if (documents.length === 0) return;
          const body = documents.flatMap((document) => [{ index: { _index: index, _id: document.id } }, document]);
          checkBulk((await this.client.bulk({ body: body as never }, { requestTimeout: timeoutMs })).body);
        }),
      delete: (index, ids) =>
        guard(index, async () => {
          if (ids.length === 0) return;
          const body = ids.map((id) => ({ delete: { _index: index, _id: id } }));
          checkBulk((await this.client.bulk({ body: body as never }, { requestTimeout: timeoutMs })).body, true);
        }),
      commit: (index) => guard(index, async () => void (await this.client.indices.refresh({ index }))),
    };
  }

  /** An explicit mapping (keywords for facets, dynamic template for prop_*); the refresh interval is commitWithinMs. */
  private async ensureIndex(index: string): Promise<void> {
    const properties = Object.fromEntries(Object.entries(INDEX_FIELDS).map(([name, field]) => [name, OPENSEARCH_TYPES[field.type]]));
    if ((await this.client.indices.exists({ index })).body) {
      // Adding fields to an existing mapping is allowed; a field already mapped otherwise is refused by the engine (kept as its error).
      await this.client.indices.putMapping({ index, body: { properties } });
      return;
    }
    const refresh = this.params.settings.commitWithinMs ?? INDEX_DEFAULTS.commitWithinMs;
    try {
      await this.client.indices.create({
        index,
        body: {
          settings: { refresh_interval: `${refresh}ms` },
          mappings: {
            dynamic_templates: [{ props: { match: `${INDEX_PROPERTY_PREFIX}*`, mapping: { type: 'text' } } }],
            properties: { id: { type: 'keyword' }, ...properties },
          },
        } as never,
      });
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

const OPENSEARCH_TYPES: Record<IndexFieldType, Record<string, unknown>> = {
  text: { type: 'text' },
  keyword: { type: 'keyword' },
  long: { type: 'long' },
  date: { type: 'date' },
};

/** _bulk answers 200 with per-item errors: the first refused item fails the call, naming its id. */
function checkBulk(answer: { errors?: boolean; items?: BulkItem[] }, deletes = false): void {
  if (!answer.errors) return;
  for (const item of answer.items ?? []) {
    const result = Object.values(item)[0];
    if (!result?.error) continue;
    // Deleting a document that is not there is the wanted end state.
    if (deletes && result.status === 404) continue;
    throw new UpstreamError(`OpenSearch refused document '${result._id}': ${result.error.type ?? ''}: ${result.error.reason ?? ''}`, {
      id: result._id,
      engineStatus: result.status,
    });
  }
}
