import type { SearchRequest } from '@gateway/search-query';
import { NotFoundError, UpstreamError, type GatewayError } from '@gateway/errors';
import { INDEX_FIELDS, INDEX_PROPERTY_PREFIX, facetValue, resultDocument, sortBuckets, type IndexCapability, type IndexFieldType, type SearchResults } from './search';

/**
 * What the engines of Elasticsearch's Query DSL (Elasticsearch, OpenSearch) share past the request, which
 * libs/search-query builds: the _search answer read as SearchResults, the index mapping, and _bulk's
 * per-item errors, the index group over a client's three calls, an error answer read as a typed error.
 * Each connector keeps only its client.
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

/** The three calls of the index group that each client makes its own way (their answers differ in shape). */
export interface QueryDslIndexClient {
  /** Creates the index with queryDslIndexBody, or adds queryDslIndexProperties to an existing one. */
  ensureIndex(index: string): Promise<void>;
  /** POST _bulk with these action and source lines; its answer's body. */
  bulk(lines: object[]): Promise<QueryDslBulkAnswer>;
  refresh(index: string): Promise<void>;
}

/** The index group of a Query DSL engine; every failure goes through the connector's error mapping. */
export function queryDslIndexGroup(engine: string, client: QueryDslIndexClient, mapError: (error: unknown, index: string) => unknown): IndexCapability {
  const guard = async <T>(index: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (e) {
      throw mapError(e, index);
    }
  };
  return {
    ensureCollection: (index) => guard(index, () => client.ensureIndex(index)),
    write: (index, documents) =>
      guard(index, async () => {
        if (documents.length === 0) return;
        checkQueryDslBulk(engine, await client.bulk(documents.flatMap((document) => [{ index: { _index: index, _id: document.id } }, document])));
      }),
    delete: (index, ids) =>
      guard(index, async () => {
        if (ids.length === 0) return;
        checkQueryDslBulk(engine, await client.bulk(ids.map((id) => ({ delete: { _index: index, _id: id } }))), true);
      }),
    commit: (index) => guard(index, () => client.refresh(index)),
  };
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
