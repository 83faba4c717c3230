/**
 * The gateway's search language (spec 4.6 `q`/`fq`), parsed once into one AST
 * that each engine's translator turns into its own syntax. User text never
 * reaches an engine as engine syntax: translators escape every value.
 *
 * This file is the interface the parser/translator work (libs/search-query)
 * and the search connectors (libs/connector-solr, -elasticsearch, -mongodb)
 * agree on. Keep the exported names and shapes; add, don't rename.
 */

/** How a field is matched. Unknown fields are 'keyword'. */
export type FieldType = 'text' | 'keyword' | 'number' | 'date';
export type FieldSchema = Readonly<Record<string, FieldType>>;

/**
 * The gateway's index mapping (the search contract corpus and the indexing
 * jobs use it). Fields named `prop_*` are keyword.
 *  text:    title, name, content, path       (tokenised, case-insensitive word match)
 *  keyword: id, mime_type, author, tags, source_connector, source_id, acl_read (exact, case-sensitive)
 *  number:  size
 *  date:    created, modified                 (ISO 8601 UTC)
 */
export declare const DEFAULT_FIELD_SCHEMA: FieldSchema;

/** A bare term or phrase without a field searches this field. */
export declare const DEFAULT_FIELD: 'content';

export type QueryNode =
  | { kind: 'all' }
  /** field:value. On text fields: one word (case-insensitive); elsewhere: the exact value. */
  | { kind: 'term'; field: string; value: string }
  /** field:"a b c": the words in this order, adjacent (text fields); exact value elsewhere. */
  | { kind: 'phrase'; field: string; value: string }
  /** field:val* (only a trailing `*`): words (text) or values (keyword) starting with `value`. */
  | { kind: 'prefix'; field: string; value: string }
  /** field:* : the field has a value. */
  | { kind: 'exists'; field: string }
  /** field:[low TO high], inclusive; undefined end = open (`*`). Numbers or ISO 8601 dates. */
  | { kind: 'range'; field: string; low?: string; high?: string }
  /**
   * Lucene boolean semantics, made explicit: a document matches when it matches
   * every `must`, none of `mustNot`, and — only when `must` is empty — at least
   * one `should`. A clause with only `mustNot` matches everything else.
   */
  | { kind: 'bool'; must: QueryNode[]; should: QueryNode[]; mustNot: QueryNode[] };

/** Thrown for a syntax error; the service maps it to 400 naming the parameter and the position. */
export declare class SearchSyntaxError extends Error {
  readonly parameter: string;
  /** 0-based character offset in the parameter's value. */
  readonly position: number;
}

/**
 * Parses q or one fq. `parameter` ('q' or 'fq') is named in errors.
 * Operator precedence: NOT > AND > OR; juxtaposition is OR (Lucene's default);
 * `+x` must, `-x`/`NOT x` must not.
 */
export declare function parseQuery(text: string, parameter: 'q' | 'fq', schema?: FieldSchema): QueryNode;

/** The fields a query names (an fq's fields must all be in facet.field). */
export declare function fieldsOf(node: QueryNode): string[];

export interface SortSpec {
  field: string;
  direction: 'asc' | 'desc';
}

/** A validated select, ready to translate. `sort` empty means relevance, then id. */
export interface SearchRequest {
  query: QueryNode;
  filters: QueryNode[];
  fields?: string[];
  facetFields?: string[];
  /** Buckets per facet field. */
  facetLimit: number;
  start: number;
  rows: number;
  sort: SortSpec[];
  schema: FieldSchema;
}

/** Solr JSON request API body for /select (params only; no local params anywhere). */
export declare function toSolrRequest(request: SearchRequest): Record<string, unknown>;
/** Elasticsearch _search body (query, from, size, sort, _source, aggs). */
export declare function toElasticsearchRequest(request: SearchRequest): Record<string, unknown>;
/** MongoDB find + one aggregation pipeline per facet field. */
export declare function toMongoRequest(request: SearchRequest): {
  filter: Record<string, unknown>;
  projection?: Record<string, 0 | 1>;
  sort: Record<string, 1 | -1>;
  skip: number;
  limit: number;
  facetPipelines: Record<string, Record<string, unknown>[]>;
};

/**
 * Raw-query guards (POST .../query): throw InvalidArgumentError (from
 * @gateway/connector-api) naming the refused construct, at any depth.
 *  Mongo: $where, $function, $accumulator; Elasticsearch: script, script_fields,
 *  runtime_mappings with scripts, stored scripts (id-only `script`); Solr: local params
 *  `{!...}` in any value, qt, shards, stream.*, wt other than json.
 */
export declare function checkMongoRawQuery(body: unknown): void;
export declare function checkElasticsearchRawQuery(body: unknown): void;
export declare function checkSolrRawQuery(body: unknown): void;
