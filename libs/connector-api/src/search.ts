import type { FieldSchema, SearchRequest } from '@gateway/search-query';
import type { ConnectorDefinition, SearchConnector } from './connector';
import { integerParam, refuseUnknownParams } from './params';
import { InvalidArgumentError } from '@gateway/errors';

/** One facet bucket: a distinct value and how many matching documents have it. */
export interface FacetBucket {
  value: string;
  count: number;
}

/**
 * The engine-neutral answer of a select (spec 4.6). Every search connector
 * answers exactly this: dates as ISO 8601 UTC strings, numbers as numbers,
 * multi-valued fields as arrays, the document id as `id`; facet buckets
 * ordered by count descending, then value ascending.
 */
export interface SearchResults {
  numFound: number;
  start: number;
  rows: number;
  docs: Record<string, unknown>[];
  /** Only when facets were asked for. */
  facets?: Record<string, FacetBucket[]>;
}

/** The settings every search connection shares (params beside the engine's own). */
export interface SearchSettings {
  /** The collection (core, index) used when the path names none. */
  collection?: string;
  /** Filter queries (gateway language, fq syntax) applied to every select. */
  defaultFilters: string[];
  /** Fields returned when the request has no fl. */
  defaultFields?: string[];
  /** Engine time-out per call; past it the call fails with 504. */
  timeoutMs: number;
  /** Largest page (select rows, raw query size/limit). */
  maxRows: number;
  /** Index writes are visible at most this long after them (INDEX_DEFAULTS when absent). */
  commitWithinMs?: number;
  /** Every select and raw query answers only documents whose acl_read holds one of the caller's principals (false when absent). */
  aclTrimming?: boolean;
}

/**
 * The search group: a select in the gateway's language, the engine's own
 * raw query (checked by the search-query guards before it leaves), and a
 * health probe. Collections are already validated names.
 */
export interface SearchCapability {
  readonly settings: SearchSettings;
  /** With `principals`, only documents whose acl_read holds one of them (permission trimming). */
  select(collection: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults>;
  /**
   * The engine's own answer. Throws InvalidArgumentError for refused constructs, NotFoundError('collection') for an unknown one.
   * With `principals`, trimmed as select is, and constructs that would answer past the trimming are refused.
   */
  rawQuery(collection: string, body: unknown, principals?: readonly string[]): Promise<unknown>;
}

/** A document as the indexing jobs write it: `id` plus fields of INDEX_FIELDS (and `prop_*`). */
export type SearchDocument = { id: string } & Record<string, unknown>;

/** How a field of the index document is stored: analysed text, exact keyword (facets), long, date. */
export type IndexFieldType = 'text' | 'keyword' | 'long' | 'date';

/**
 * The index document, one shared description so Solr, Elasticsearch and
 * MongoDB agree (table in libs/connector-api/README.md). `id` is
 * `<source connector id>:<source id>`; custom properties go in `prop_<name>` (text).
 */
export const INDEX_FIELDS: Readonly<Record<string, { type: IndexFieldType; multi?: boolean }>> = {
  title: { type: 'text' },
  name: { type: 'text' },
  path: { type: 'text' },
  content: { type: 'text' },
  mime_type: { type: 'keyword' },
  author: { type: 'keyword' },
  tags: { type: 'keyword', multi: true },
  source_connector: { type: 'keyword' },
  source_id: { type: 'keyword' },
  acl_read: { type: 'keyword', multi: true },
  size: { type: 'long' },
  created: { type: 'date' },
  modified: { type: 'date' },
};
/** Custom properties of the source document: `prop_<name>`, indexed as text. */
export const INDEX_PROPERTY_PREFIX = 'prop_';
export const INDEX_DEFAULTS = { commitWithinMs: 1000 };

/**
 * The index group, as the indexing jobs use it: make sure the collection exists with the
 * mapping above, write batches (visible at most commitWithinMs later), delete by id, and
 * commit (made visible now) at the end of a run. A document the engine refuses fails the
 * write with an error naming its id.
 */
export interface IndexCapability {
  /** Creates the collection with the gateway's mapping when missing, adds missing fields; a no-op when all is there. */
  ensureCollection(collection: string): Promise<void>;
  write(collection: string, documents: SearchDocument[]): Promise<void>;
  delete(collection: string, ids: string[]): Promise<void>;
  /** Solr commit, Elasticsearch refresh, MongoDB nothing (writes are visible when acknowledged). */
  commit(collection: string): Promise<void>;
}

const COMMON_KEYS = ['collection', 'defaultFilters', 'defaultFields', 'timeoutMs', 'maxRows', 'commitWithinMs', 'aclTrimming'] as const;
export const SEARCH_DEFAULTS = { timeoutMs: 10_000, maxRows: 1000 };

/** Collection, core and index names a path may carry: no wildcards, lists, leading '_' or '.', or path characters. */
export const COLLECTION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** The settings a search connection may show in repositoryInfo (never credentials). */
export function searchPublicParams(settings: SearchSettings): Record<string, unknown> {
  return {
    ...(settings.collection ? { collection: settings.collection } : {}),
    defaultFilters: settings.defaultFilters,
    ...(settings.defaultFields ? { defaultFields: settings.defaultFields } : {}),
    timeoutMs: settings.timeoutMs,
    maxRows: settings.maxRows,
    aclTrimming: settings.aclTrimming === true,
  };
}

/** publicParams of an engine reached by URL with an optional user (Solr, Elasticsearch): never its password or key. */
export function urlEnginePublicParams(params: { url: string; user?: string; settings: SearchSettings }): Record<string, unknown> {
  return { url: params.url, ...(params.user ? { user: params.user } : {}), ...searchPublicParams(params.settings) };
}

/**
 * Validates the params every search connector shares and refuses keys that
 * are neither these nor the engine's own (`engineKeys`); errors name the key.
 */
export function parseSearchSettings(params: Record<string, unknown>, engineKeys: readonly string[]): SearchSettings {
  const known = [...engineKeys, ...COMMON_KEYS];
  refuseUnknownParams(params, known);
  const collection = params.collection;
  if (collection !== undefined && (typeof collection !== 'string' || !COLLECTION_NAME.test(collection))) {
    throw new InvalidArgumentError('collection', 'must be a collection name (letters, digits, . _ -; not starting with . or _)');
  }
  return {
    collection,
    defaultFilters: stringList(params, 'defaultFilters', false) ?? [],
    defaultFields: stringList(params, 'defaultFields', true),
    timeoutMs: integerParam(params, 'timeoutMs', SEARCH_DEFAULTS.timeoutMs, 1, 600_000),
    maxRows: integerParam(params, 'maxRows', SEARCH_DEFAULTS.maxRows, 1, 100_000),
    ...(params.commitWithinMs !== undefined ? { commitWithinMs: integerParam(params, 'commitWithinMs', INDEX_DEFAULTS.commitWithinMs, 1, 3_600_000) } : {}),
    aclTrimming: booleanParam(params, 'aclTrimming', false),
  };
}

/** A YAML boolean; a string such as 'yes' is refused, so a typo cannot turn trimming off. */
function booleanParam(params: Record<string, unknown>, name: string, fallback: boolean): boolean {
  const raw = params[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'boolean') throw new InvalidArgumentError(name, 'must be true or false');
  return raw;
}


/** Filters may hold commas, so only fields also take the comma-list form. */
function stringList(params: Record<string, unknown>, name: string, commaList: boolean): string[] | undefined {
  const raw = params[name];
  if (raw === undefined) return undefined;
  const list = commaList && typeof raw === 'string' ? raw.split(',').map((s) => s.trim()) : raw;
  if (!Array.isArray(list) || list.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new InvalidArgumentError(name, 'must be a list of non-empty strings');
  }
  return list.map((v: string) => v.trim());
}


/**
 * One engine document in the answer's form: `id` first, engine-internal
 * members (`_id`, `_version_`, anything starting with `_`) left out, dates
 * (by the schema, or Date objects) as ISO 8601 UTC strings. With `fields`
 * only those are kept (and `id`, always).
 */
export function resultDocument(
  id: unknown,
  source: Record<string, unknown>,
  schema: FieldSchema,
  fields?: readonly string[],
): Record<string, unknown> {
  const doc: Record<string, unknown> = { id: String(id) };
  for (const [key, value] of Object.entries(source)) {
    if (key === 'id' || key.startsWith('_') || value === undefined || value === null) continue;
    if (fields && !fields.includes(key)) continue;
    doc[key] = Array.isArray(value) ? value.map((v) => fieldValue(v, schema[key])) : fieldValue(value, schema[key]);
  }
  return doc;
}

/** A facet value as a string: dates as ISO 8601 UTC, the rest as their text. */
export function facetValue(value: unknown, type: string | undefined): string {
  const normalised = fieldValue(value, type);
  return typeof normalised === 'string' ? normalised : String(normalised);
}

/** Count descending, then value ascending (code point order: what Solr's index order gives for equal counts). */
export function sortBuckets(buckets: FacetBucket[]): FacetBucket[] {
  return buckets.sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

function fieldValue(value: unknown, type: string | undefined): unknown {
  if (value instanceof Date) return value.toISOString();
  if (type === 'date' && (typeof value === 'string' || typeof value === 'number')) {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? value : date.toISOString();
  }
  return value;
}

/**
 * What the search connectors share: identity from the definition, and the `search` group
 * wired to the engine's own select and raw query. A search engine connector extends this.
 */
export abstract class EngineConnector implements SearchConnector {
  abstract readonly typeId: string;
  abstract readonly publicParams: Record<string, unknown>;
  readonly id: string;
  readonly description: string;
  readonly search: SearchCapability;

  protected constructor(definition: ConnectorDefinition, settings: SearchSettings) {
    this.id = definition.id;
    this.description = definition.description;
    this.search = {
      settings,
      select: (collection, request, principals) => this.select(collection, request, principals),
      rawQuery: (collection, body, principals) => {
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new InvalidArgumentError('body', `must be ${this.rawQueryBody}`);
        return this.rawQuery(collection, body as Record<string, unknown>, principals);
      },
    };
  }

  abstract checkHealth(): Promise<void>;
  /** What a raw query's body is, for the 400 answering a body that is not a JSON object. */
  protected abstract readonly rawQueryBody: string;
  /** `principals`: trim to documents whose acl_read holds one of them (absent: no trimming). */
  protected abstract select(collection: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults>;
  protected abstract rawQuery(collection: string, body: Record<string, unknown>, principals?: readonly string[]): Promise<unknown>;
}
