import { toElasticsearchRequest, trimElasticsearchBody, type SearchRequest } from '@gateway/search-query';
import { NotFoundError, UpstreamError, type GatewayError } from '@gateway/errors';
import type { ConnectorDefinition } from './connector';
import {
  EngineConnector,
  INDEX_DEFAULTS,
  INDEX_FIELDS,
  INDEX_PROPERTY_PREFIX,
  facetValue,
  resultDocument,
  sortBuckets,
  type IndexCapability,
  type IndexFieldType,
  type SearchResults,
  type SearchSettings,
} from './search';

/**
 * What the engines of Elasticsearch's Query DSL (Elasticsearch, OpenSearch) share: the connector itself
 * (QueryDslConnector: requests from search-query's Elasticsearch translator, the _search answer read as
 * SearchResults, the index mapping, _bulk's per-item errors) over the calls each client makes its own way,
 * and an error answer read as a typed error. Each connector keeps only its client.
 */

interface Hit {
  _id: string;
  _source?: Record<string, unknown>;
}

interface TermsAggregation {
  buckets?: { key: string | number; key_as_string?: string; doc_count: number }[];
}

/** A _search answer as the gateway's results: ids from `_source.id` else `_id`, facets from the terms aggregations named by field. */
export function queryDslResults(answer: Record<string, unknown>, request: SearchRequest): SearchResults {
  const hits = (answer.hits ?? {}) as { total?: { value?: number } | number; hits?: Hit[] };
  const results: SearchResults = {
    numFound: typeof hits.total === 'number' ? hits.total : (hits.total?.value ?? 0),
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
            // Dates are re-rendered from the epoch key as ISO 8601 UTC; other keys as the engine prints them.
            value: facetValue(request.schema[field] === 'date' ? b.key : (b.key_as_string ?? b.key), request.schema[field]),
            count: b.doc_count,
          })),
        ),
      ]),
    );
  }
  return results;
}

const FIELD_MAPPINGS: Record<IndexFieldType, Record<string, unknown>> = {
  text: { type: 'text' },
  keyword: { type: 'keyword' },
  long: { type: 'long' },
  date: { type: 'date' },
};

/** The INDEX_FIELDS as mapping properties: keywords for facets, text for words. */
export function queryDslIndexProperties(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(Object.entries(INDEX_FIELDS).map(([name, field]) => [name, FIELD_MAPPINGS[field.type]]));
}

/** The body that creates an index for the index group: explicit mapping, prop_* as text, refresh every `refreshMs`. */
export function queryDslIndexBody(refreshMs: number): { settings: Record<string, unknown>; mappings: Record<string, unknown> } {
  return {
    settings: { refresh_interval: `${refreshMs}ms` },
    mappings: {
      dynamic_templates: [{ props: { match: `${INDEX_PROPERTY_PREFIX}*`, mapping: { type: 'text' } } }],
      properties: { id: { type: 'keyword' }, ...queryDslIndexProperties() },
    },
  };
}

export interface QueryDslBulkAnswer {
  errors?: boolean;
  items?: Record<string, { _id?: string | null; status?: number; error?: { type?: string; reason?: string | null } }>[];
}

/** _bulk answers 200 with per-item errors: the first refused item fails the call, naming its id. */
export function checkQueryDslBulk(engine: string, answer: QueryDslBulkAnswer, deletes = false): void {
  if (!answer.errors) return;
  for (const item of answer.items ?? []) {
    const result = Object.values(item)[0];
    if (!result?.error) continue;
    // Deleting a document that is not there is the wanted end state.
    if (deletes && result.status === 404) continue;
    throw new UpstreamError(`${engine} refused document '${result._id}': ${result.error.type ?? ''}: ${result.error.reason ?? ''}`, {
      id: result._id,
      engineStatus: result.status,
    });
  }
}

/** The calls each Query DSL client makes its own way (their answers differ in shape), each answering its body. */
export interface QueryDslClient {
  indexExists(index: string): Promise<boolean>;
  createIndex(index: string, body: ReturnType<typeof queryDslIndexBody>): Promise<unknown>;
  putMapping(index: string, properties: ReturnType<typeof queryDslIndexProperties>): Promise<unknown>;
  /** The type an engine's error answer names (resource_already_exists_exception...); undefined for another error. */
  answerErrorType(error: unknown): string | undefined;
  clusterHealth(index: string): Promise<unknown>;
  info(): Promise<unknown>;
  /** POST /<index>/_search with exactly this body (the transport: no body member moves to the query string). */
  search(index: string, body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** POST _bulk with these action and source lines. */
  bulk(lines: object[]): Promise<QueryDslBulkAnswer>;
  refresh(index: string): Promise<unknown>;
  close(): Promise<unknown>;
}

/** One Query DSL engine: its name in messages, its client's calls, the mapping of its client's errors, its raw-query guards. */
export interface QueryDslEngine {
  name: string;
  client: QueryDslClient;
  mapError(error: unknown, index?: string): unknown;
  checkRawQuery(body: unknown): void;
  /** What a raw query may not carry past permission trimming. */
  checkTrimmedRawQuery(body: unknown): void;
}

/**
 * Search and the index group of a Query DSL engine: requests built and trimmed by search-query's
 * Elasticsearch translator, every client failure through the engine's error mapping.
 */
export abstract class QueryDslConnector extends EngineConnector {
  protected readonly rawQueryBody: string;
  readonly index: IndexCapability;

  protected constructor(definition: ConnectorDefinition, settings: SearchSettings, private readonly engine: QueryDslEngine) {
    super(definition, settings);
    this.rawQueryBody = `an ${engine.name} _search request body (a JSON object)`;
    const { client } = engine;
    this.index = {
      ensureCollection: (index) => this.guarded(index, () => this.ensureIndex(index)),
      write: (index, documents) =>
        this.guarded(index, async () => {
          if (documents.length === 0) return;
          checkQueryDslBulk(engine.name, await client.bulk(documents.flatMap((document) => [{ index: { _index: index, _id: document.id } }, document])));
        }),
      delete: (index, ids) =>
        this.guarded(index, async () => {
          if (ids.length === 0) return;
          checkQueryDslBulk(engine.name, await client.bulk(ids.map((id) => ({ delete: { _index: index, _id: id } }))), true);
        }),
      commit: (index) => this.guarded(index, async () => void (await client.refresh(index))),
    };
  }

  checkHealth(): Promise<void> {
    const index = this.search.settings.collection;
    const { client, name } = this.engine;
    return this.guarded(index, async () => {
      if (!index) return void (await client.info());
      if (!(await client.indexExists(index))) throw new UpstreamError(`${name} has no index '${index}' (the connection's collection)`);
      await client.clusterHealth(index);
    });
  }

  async close(): Promise<void> {
    await this.engine.client.close();
  }

  protected async select(index: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults> {
    const body = toElasticsearchRequest(request);
    return queryDslResults(await this.searchIndex(index, principals ? trimElasticsearchBody(body, principals) : body), request);
  }

  /** The body goes to <index>/_search only, its size capped at maxRows. */
  protected async rawQuery(index: string, input: Record<string, unknown>, principals?: readonly string[]): Promise<unknown> {
    this.engine.checkRawQuery(input);
    if (principals) this.engine.checkTrimmedRawQuery(input);
    const size = typeof input.size === 'number' && input.size >= 0 ? Math.floor(input.size) : 10;
    const body = { ...input, size: Math.min(size, this.search.settings.maxRows) };
    return this.searchIndex(index, principals ? trimElasticsearchBody(body, principals) : body);
  }

  /** An explicit mapping (keywords for facets, dynamic template for prop_*); the refresh interval is commitWithinMs. */
  private async ensureIndex(index: string): Promise<void> {
    const { client } = this.engine;
    if (await client.indexExists(index)) {
      // Adding fields to an existing mapping is allowed; a field already mapped otherwise is refused by the engine (kept as its error).
      await client.putMapping(index, queryDslIndexProperties());
      return;
    }
    try {
      await client.createIndex(index, queryDslIndexBody(this.search.settings.commitWithinMs ?? INDEX_DEFAULTS.commitWithinMs));
    } catch (e) {
      // Another node created it between exists and create: the same mapping, so done.
      if (client.answerErrorType(e) !== 'resource_already_exists_exception') throw e;
    }
  }

  private searchIndex(index: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.guarded(index, () => this.engine.client.search(index, body));
  }

  private async guarded<T>(index: string | undefined, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw this.engine.mapError(e, index);
    }
  }
}

interface QueryDslErrorBody {
  error?: { type?: string; reason?: string; root_cause?: { type?: string; reason?: string }[] } | string;
}

/**
 * An engine's error answer as a typed error: a missing index on a 404, refused credentials, else the root
 * cause's type and reason. Built from the answer only, never from the client's request meta (which carries
 * the Authorization header).
 */
export function queryDslAnswerError(engine: string, status: number, answer: unknown, index?: string): GatewayError {
  const body = (answer ?? {}) as QueryDslErrorBody;
  const detail = typeof body.error === 'string' ? { type: undefined, reason: body.error, root_cause: undefined } : (body.error ?? {});
  if (status === 404 && index !== undefined && (detail.type === 'index_not_found_exception' || !detail.type)) {
    return new NotFoundError('collection', index);
  }
  if (status === 401 || status === 403) return new UpstreamError(`${engine} refused the connection's credentials (HTTP ${status})`);
  const cause = detail.root_cause?.[0];
  const reason = cause?.reason ?? detail.reason ?? `HTTP ${status}`;
  const type = cause?.type ?? detail.type;
  return new UpstreamError(`${engine}: ${type ? `${type}: ` : ''}${reason}`, { engineStatus: status });
}
