/**
 * Permission trimming (issue 14): a search connection with `aclTrimming: true` answers a caller only
 * documents whose `acl_read` holds one of the caller's principals (user name, `__everyone__`, groups).
 * The filter is added here, after the request is built (select) or after the raw-query guards ran
 * (raw query), so neither the gateway language nor an engine body can leave it out. A raw body must
 * not widen the answer past the filter either: the constructs that answer from documents outside the
 * query's matches (aggregations over the whole index, suggesters, kNN, facet domains, sub-queries...)
 * are refused while trimming, with 400 naming `body`.
 */
import { InvalidArgumentError } from '@gateway/errors';
import type { toMongoRequest } from './mongo';

/** The index field holding the principals that may read a document (INDEX_FIELDS). */
export const ACL_FIELD = 'acl_read';
/** The principal every caller has: a document readable by anybody. */
export const EVERYONE = '__everyone__';

/**
 * A principal as user names and groups are (the user-name alphabet), or `__everyone__`. Checked again
 * here because Solr's terms query takes its values as one comma-separated text: a principal may not
 * bring a comma, brace, quote or space into it.
 */
const PRINCIPAL = /^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}$/;

/** The caller's principals: user name, `__everyone__`, groups; each once. */
export function aclPrincipals(username: string, groups: readonly string[] = []): string[] {
  return checked([...new Set([username, EVERYONE, ...groups])]);
}

/** At least one principal, each of the principal alphabet (a programming error otherwise: users are validated on the way in). */
function checked(principals: readonly string[]): string[] {
  if (principals.length === 0) throw new Error('Permission trimming needs at least one principal');
  for (const principal of principals) {
    if (!PRINCIPAL.test(principal)) throw new Error(`Invalid principal '${principal}' for permission trimming`);
  }
  return [...principals];
}

function refuse(construct: string, engine: string): never {
  throw new InvalidArgumentError('body', `${construct} is not allowed in a raw ${engine} query on a permission-trimmed connection`, 'RAW_QUERY_REFUSED');
}

/** Calls `check` with every member (name and value) and every array item (no name) in `body`; an explicit stack: no recursion limit. */
function eachMember(body: unknown, check: (key: string | undefined, value: unknown) => void): void {
  const stack: { key?: string; value: unknown }[] = [{ value: body }];
  while (stack.length > 0) {
    const { key, value } = stack.pop() as { key?: string; value: unknown };
    check(key, value);
    // Stryker disable next-line ConditionalExpression: an array walked as an object gives its items the names '0', '1'..., which no guard refuses: the same answers
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item });
    } else if (value !== null && typeof value === 'object') {
      for (const [name, member] of Object.entries(value)) stack.push({ key: name, value: member });
    }
  }
}

// --- Solr -----------------------------------------------------------------------------------------

/** The fq every trimmed Solr request gets: a terms query on acl_read (a filter: cached, unscored). */
export function solrAclFilter(principals: readonly string[]): string {
  return `{!terms f=${ACL_FIELD}}${checked(principals).join(',')}`;
}

/**
 * The Solr request (`{params, ...}` of the JSON request API) with the acl fq added to its params' fq
 * (kept as a list beside the caller's own: Solr intersects every fq).
 */
export function trimSolrRequest(request: Record<string, unknown>, principals: readonly string[]): Record<string, unknown> {
  const params = { ...((request.params as Record<string, unknown> | undefined) ?? {}) };
  const own: unknown[] = params.fq === undefined ? [] : Array.isArray(params.fq) ? params.fq : [params.fq];
  params.fq = [...own, solrAclFilter(principals)];
  return { ...request, params };
}

/**
 * Solr constructs that answer from documents the fq does not reach: JSON facet `domain` changes (a
 * domain query replaces the filtered set; join, graph and block domains leave it), the terms,
 * MoreLikeThis and expand components (expand.fq replaces the filters), `json.*` params (a second JSON
 * request the guards would not see as such), `explainOther` (debug output about documents of another
 * query), and the [subquery] and [child] transformers of fl.
 */
export function checkSolrTrimmedRawQuery(body: unknown): void {
  eachMember(body, (key, value) => {
    // Stryker disable next-line ConditionalExpression: test() of a non-string tests its String(): an object's is "[object ...]", an array's its items joined by commas, and each item is checked on its own anyway
    if (typeof value === 'string' && /\[\s*(subquery|child)\b/i.test(value)) refuse('the [subquery] and [child] transformers', 'Solr');
    if (key === undefined) return;
    if (key === 'domain') refuse('a facet domain', 'Solr');
    if (key === 'terms' || key.startsWith('terms.')) refuse(`${key} (the terms component)`, 'Solr');
    if (key === 'mlt' || key.startsWith('mlt.')) refuse(`${key} (MoreLikeThis)`, 'Solr');
    if (key === 'expand' || key.startsWith('expand.')) refuse(`${key} (expand)`, 'Solr');
    if (key === 'json' || key.startsWith('json.')) refuse(key, 'Solr');
    if (key === 'explainOther') refuse('explainOther (explains documents outside the result)', 'Solr');
  });
}

// --- Elasticsearch --------------------------------------------------------------------------------

/** The terms filter every trimmed Elasticsearch request gets. */
export function elasticsearchAclFilter(principals: readonly string[]): Record<string, unknown> {
  return { terms: { [ACL_FIELD]: checked(principals) } };
}

/**
 * The _search body with its query (match_all when it has none) wrapped in a bool whose filter is the
 * acl terms. post_filter and aggregations run on the query's matches, so they stay inside it.
 */
export function trimElasticsearchBody(body: Record<string, unknown>, principals: readonly string[]): Record<string, unknown> {
  const query = body.query ?? { match_all: {} };
  return { ...body, query: { bool: { must: [query], filter: [elasticsearchAclFilter(principals)] } } };
}

/**
 * Elasticsearch members whose answer does not come from the query's matches: the `global`
 * aggregation (every document of the index), significant_terms/significant_text (background counts
 * over the whole index), suggesters (terms of the whole index), top-level knn, retrievers, sub_searches
 * and rank (combined with the query, not filtered by it), and the join queries and aggregations whose
 * inner hits are other documents (has_child, has_parent, parent_id, children, parent).
 */
const ES_WIDENING = new Set([
  'global',
  'significant_terms',
  'significant_text',
  'background_filter',
  'suggest',
  'knn',
  'retriever',
  'sub_searches',
  'rank',
  'has_child',
  'has_parent',
  'parent_id',
  'children',
  'parent',
]);

export function checkElasticsearchTrimmedRawQuery(body: unknown): void {
  checkQueryDslTrimmedRawQuery(body, 'Elasticsearch');
}

/** OpenSearch shares the query DSL and these members; its own (search_pipeline, ext, neural...) are refused by checkOpenSearchRawQuery. */
export function checkOpenSearchTrimmedRawQuery(body: unknown): void {
  checkQueryDslTrimmedRawQuery(body, 'OpenSearch');
}

function checkQueryDslTrimmedRawQuery(body: unknown, engine: string): void {
  eachMember(body, (key) => {
    // Stryker disable next-line ConditionalExpression: Set.has(undefined) is false (and a type error the typescript checker reports)
    if (key !== undefined && ES_WIDENING.has(key)) refuse(key, engine);
  });
}

// --- MongoDB --------------------------------------------------------------------------------------

/** The condition every trimmed MongoDB find, count and aggregation gets. */
export function mongoAclFilter(principals: readonly string[]): Record<string, unknown> {
  return { [ACL_FIELD]: { $in: checked(principals) } };
}

/** `filter` AND the acl condition: a `$or` (or anything else) at the filter's top stays inside the `$and`. */
export function trimMongoFilter(filter: Record<string, unknown>, principals: readonly string[]): Record<string, unknown> {
  const acl = mongoAclFilter(principals);
  return Object.keys(filter).length === 0 ? acl : { $and: [filter, acl] };
}

/** An aggregation pipeline with the acl `$match` first, so no later stage sees another document. */
export function trimMongoPipeline(pipeline: readonly Record<string, unknown>[], principals: readonly string[]): Record<string, unknown>[] {
  return [{ $match: mongoAclFilter(principals) }, ...pipeline];
}

/** Every filter of the request (find, count, both missing-last parts) and every facet pipeline, trimmed. */
export function trimMongoRequest(mongo: ReturnType<typeof toMongoRequest>, principals: readonly string[]): ReturnType<typeof toMongoRequest> {
  return {
    ...mongo,
    filter: trimMongoFilter(mongo.filter, principals),
    facetPipelines: Object.fromEntries(Object.entries(mongo.facetPipelines).map(([field, pipeline]) => [field, trimMongoPipeline(pipeline, principals)])),
    ...(mongo.missingLast
      ? {
          missingLast: {
            ...mongo.missingLast,
            withValue: trimMongoFilter(mongo.missingLast.withValue, principals),
            withoutValue: trimMongoFilter(mongo.missingLast.withoutValue, principals),
          },
        }
      : {}),
  };
}

/**
 * Stages and operators that reach documents past the pipeline's own input: `$unionWith` and `$lookup`
 * (other collections, or this one unfiltered), `$graphLookup`, and `$facet` (kept out so each
 * sub-pipeline need not be checked). A raw MongoDB query is a find today; this guards any pipeline
 * a later raw form would carry.
 */
const MONGO_WIDENING = new Set(['$unionWith', '$lookup', '$graphLookup', '$facet']);

export function checkMongoTrimmedRawQuery(body: unknown): void {
  eachMember(body, (key) => {
    // Stryker disable next-line ConditionalExpression: Set.has(undefined) is false (and a type error the typescript checker reports)
    if (key !== undefined && MONGO_WIDENING.has(key)) refuse(key, 'MongoDB');
  });
}
