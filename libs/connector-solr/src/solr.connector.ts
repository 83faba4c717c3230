import {
  facetValue,
  resultDocument,
  sortBuckets,
  type ConnectorDefinition,
  type FacetBucket,
  type SearchResults,
  EngineConnector,
  INDEX_DEFAULTS,
  INDEX_FIELDS,
  INDEX_PROPERTY_PREFIX,
  NotFoundError,
  UpstreamError,
  urlEnginePublicParams,
  type IndexCapability,
  type IndexFieldType,
  type SearchDocument,
} from '@gateway/connector-api';
import { checkSolrRawQuery, checkSolrTrimmedRawQuery, toSolrRequest, trimSolrRequest, type SearchRequest } from '@gateway/search-query';
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
  readonly index: IndexCapability;

  constructor(definition: ConnectorDefinition, private readonly params: SolrParams) {
    super(definition, params.settings);
    const { settings } = params;
    this.publicParams = urlEnginePublicParams(params);
    this.client = new SolrClient({ url: params.url, user: params.user, password: params.password, timeoutMs: settings.timeoutMs });
    const commitWithin = settings.commitWithinMs ?? INDEX_DEFAULTS.commitWithinMs;
    this.index = {
      ensureCollection: (collection) => this.ensureCore(collection),
      write: async (collection, documents) => {
        if (documents.length === 0) return;
        await this.update(collection, `update?commitWithin=${commitWithin}&wt=json`, documents.map(solrDocument), documents);
      },
      delete: async (collection, ids) => {
        if (ids.length === 0) return;
        await this.update(collection, `update?commitWithin=${commitWithin}&wt=json`, { delete: ids });
      },
      commit: async (collection) => {
        await this.client.postJson(collection, 'update?commit=true&wt=json', {});
      },
    };
  }

  /**
   * The core's managed schema gets the gateway's fields it lacks (Schema API). A missing core is
   * created from Solr's `_default` configset (managed schema, so the fields can then be added).
   */
  private async ensureCore(collection: string): Promise<void> {
    let fields: { name: string }[];
    try {
      fields = ((await this.client.get(`${encodeURIComponent(collection)}/schema/fields?wt=json`, collection)).fields ?? []) as { name: string }[];
    } catch (e) {
      if (!(e instanceof NotFoundError)) throw e;
      await this.client.get(`admin/cores?action=CREATE&name=${encodeURIComponent(collection)}&configSet=${encodeURIComponent(this.params.configSet)}&wt=json`);
      fields = ((await this.client.get(`${encodeURIComponent(collection)}/schema/fields?wt=json`, collection)).fields ?? []) as { name: string }[];
    }
    const have = new Set(fields.map((f) => f.name));
    const add = Object.entries(INDEX_FIELDS)
      .filter(([name]) => !have.has(name))
      .map(([name, field]) => ({ name, type: SOLR_TYPES[field.type], stored: true, indexed: true, multiValued: field.multi === true }));
    const commands: Record<string, unknown> = {};
    if (add.length > 0) commands['add-field'] = add;
    const dynamic = (await this.client.get(`${encodeURIComponent(collection)}/schema/dynamicfields?wt=json`, collection)).dynamicFields as { name: string }[] | undefined;
    if (!(dynamic ?? []).some((f) => f.name === `${INDEX_PROPERTY_PREFIX}*`)) {
      commands['add-dynamic-field'] = { name: `${INDEX_PROPERTY_PREFIX}*`, type: SOLR_TYPES.text, stored: true, indexed: true, multiValued: true };
    }
    if (Object.keys(commands).length > 0) await this.client.postJson(collection, 'schema?wt=json', commands);
  }

  /** One update request; Solr refuses the whole batch for one bad document, so the error names the first id it mentions. */
  private async update(collection: string, handler: string, body: unknown, documents?: SearchDocument[]): Promise<void> {
    try {
      await this.client.postJson(collection, handler, body);
    } catch (e) {
      if (!(e instanceof UpstreamError) || !documents) throw e;
      const named = documents.find((d) => e.message.includes(d.id));
      throw new UpstreamError(`Solr refused document ${named ? `'${named.id}'` : 'of the batch'}: ${e.message}`, { id: named?.id });
    }
  }

  async checkHealth(): Promise<void> {
    const collection = this.params.settings.collection;
    if (collection) await this.client.get(`${encodeURIComponent(collection)}/admin/ping?wt=json`, collection);
    else await this.client.get('admin/info/system?wt=json');
  }

  async close(): Promise<void> {
    this.client.close();
  }

  protected async select(collection: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults> {
    const body = principals ? trimSolrRequest(toSolrRequest(request), principals) : toSolrRequest(request);
    const answer = (await this.client.postJson(collection, 'select', body)) as SolrSelectAnswer;
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
  protected async rawQuery(collection: string, input: Record<string, unknown>, principals?: readonly string[]): Promise<unknown> {
    checkSolrRawQuery(input);
    if (principals) checkSolrTrimmedRawQuery(input);
    const isJsonRequest = Object.keys(input).some((key) => JSON_REQUEST_KEYS.includes(key));
    const request: Record<string, unknown> = isJsonRequest ? { ...input } : { params: input };
    const params = { ...((request.params as Record<string, unknown> | undefined) ?? {}) };
    const max = this.params.settings.maxRows;
    params.wt = 'json';
    params.rows = Math.min(intOr(params.rows, 10), max);
    if (request.limit !== undefined) request.limit = Math.min(intOr(request.limit, 10), max);
    request.params = params;
    // Added after the guards, which refuse local params in what the caller sent: this one is ours.
    return this.client.postJson(collection, 'select', principals ? trimSolrRequest(request, principals) : request);
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

/** Field types of Solr's _default configset. */
const SOLR_TYPES: Record<IndexFieldType, string> = { text: 'text_general', keyword: 'string', long: 'plong', date: 'pdate' };

/** Only the gateway's fields and prop_* go to the engine; undefined/null members are left out. */
function solrDocument(document: SearchDocument): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(document)) if (value !== undefined && value !== null) out[key] = value;
  return out;
}
