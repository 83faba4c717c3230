/**
 * Guards for raw engine queries (POST .../query): the body goes to the engine
 * as it is, so the constructs that run code on the engine or reach past the
 * collection are refused, at any depth. The walks use an explicit stack, so a
 * deeply nested body cannot overflow the call stack.
 */
import { InvalidArgumentError } from '@gateway/errors';

const PARAMETER = 'body';

interface Visit {
  key: string | undefined;
  value: unknown;
}

/** Calls `check` with every member name and value of every object in `body`, and every string. */
function walk(body: unknown, check: (visit: Visit) => void): void {
  const stack: Visit[] = [{ key: undefined, value: body }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    check(visit);
    const { value } = visit;
    // Stryker disable next-line ConditionalExpression: an array walked as an object gives its items the names '0', '1'..., which no guard refuses: the same answers
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ key: undefined, value: item });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, member] of Object.entries(value)) stack.push({ key, value: member });
    }
  }
}

function refuse(construct: string, engine: string): never {
  throw new InvalidArgumentError(PARAMETER, `${construct} is not allowed in a raw ${engine} query`, 'RAW_QUERY_REFUSED');
}

const MONGO_REFUSED = new Set(['$where', '$function', '$accumulator']);

/** Refuses $where, $function and $accumulator (server-side JavaScript) anywhere in a find. */
export function checkMongoRawQuery(body: unknown): void {
  walk(body, ({ key }) => {
    if (key !== undefined && MONGO_REFUSED.has(key)) refuse(key, 'MongoDB');
  });
}

/**
 * Refuses scripts: `script` (inline or stored by id), `script_fields`, `runtime_mappings`
 * with a script, and every other member whose name holds "script" (script_score,
 * scripted_metric, bucket_script, map_script, ...); `index`/`_index` members, through
 * which a query reads documents of another index; and `wrapper`, a base64-encoded query the walk
 * cannot read (it could carry any of the above). A field named so is refused too.
 */
export function checkElasticsearchRawQuery(body: unknown): void {
  walk(body, (visit) => checkQueryDslMember(visit, 'Elasticsearch'));
}

/**
 * OpenSearch members that reach past the query DSL it shares with Elasticsearch: an ad hoc
 * `search_pipeline` (its processors rewrite the request and the answer, some call ML models),
 * `ext` (the parameters those processors and plugins read: generative answers, reranking),
 * `neural`/`neural_sparse` (run a model of ml-commons, possibly a remote connector to another
 * service) and `pit` (a point in time opened elsewhere, possibly over other indices).
 */
const OPENSEARCH_REFUSED = new Set(['search_pipeline', 'ext', 'neural', 'neural_sparse', 'pit']);

/** The Elasticsearch guard (the query DSL is shared), naming OpenSearch, plus OpenSearch's own members (OPENSEARCH_REFUSED). */
export function checkOpenSearchRawQuery(body: unknown): void {
  walk(body, (visit) => {
    if (visit.key !== undefined && OPENSEARCH_REFUSED.has(visit.key)) refuse(visit.key, 'OpenSearch');
    checkQueryDslMember(visit, 'OpenSearch');
  });
}

function checkQueryDslMember({ key, value }: Visit, engine: string): void {
  if (key === undefined) return;
  if (key === 'runtime_mappings') {
    walk(value, (inner) => {
      if (inner.key !== undefined && /script/i.test(inner.key)) refuse('runtime_mappings with a script', engine);
    });
  }
  if (/script/i.test(key)) refuse(key, engine);
  // Terms lookup, more_like_this, percolate and indexed shapes read documents of another index.
  if (key === 'index' || key === '_index') refuse(`${key} (a document of another index)`, engine);
  if (key === 'wrapper') refuse('wrapper (a base64-encoded query)', engine);
}

function isStreamParameter(key: string): boolean {
  return key.startsWith('stream.');
}

/** A query given as text (or a list of texts), not as a JSON query DSL object. */
function isQueryText(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
}

/**
 * Refuses local params (`{!...}` in any name or value), the JSON query DSL (an object as
 * `query`, `filter` or a named query: it names query parsers — join with fromIndex, func,
 * frange — as local params do), `qt` (another handler), `shards` (other hosts), `stream.*`
 * (remote or local files) and `wt` other than json.
 */
export function checkSolrRawQuery(body: unknown): void {
  walk(body, ({ key, value }) => {
    if ((key === 'query' || key === 'filter') && !isQueryText(value)) refuse('JSON query DSL (a query that is not text)', 'Solr');
    if (key === 'queries' && !(value !== null && typeof value === 'object' && Object.values(value).every(isQueryText))) {
      refuse('JSON query DSL (a query that is not text)', 'Solr');
    }
    if (typeof value === 'string' && value.includes('{!')) refuse('local params ({!...})', 'Solr');
    if (key === undefined) return;
    if (key.includes('{!')) refuse('local params ({!...})', 'Solr');
    if (key === 'qt') refuse('qt', 'Solr');
    if (key === 'shards' || key.startsWith('shards.')) refuse(key, 'Solr');
    if (isStreamParameter(key)) refuse(key, 'Solr');
    if (key === 'wt') {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((item) => item !== 'json')) refuse('wt other than json', 'Solr');
    }
  });
}
