/**
 * Guards for raw engine queries (POST .../query): the body goes to the engine
 * as it is, so the constructs that run code on the engine or reach past the
 * collection are refused, at any depth. The walks use an explicit stack, so a
 * deeply nested body cannot overflow the call stack.
 */
import { InvalidArgumentError } from '@gateway/connector-api';

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
 * scripted_metric, bucket_script, map_script, ...) — a field named so is refused too.
 */
export function checkElasticsearchRawQuery(body: unknown): void {
  walk(body, ({ key, value }) => {
    if (key === undefined) return;
    if (key === 'runtime_mappings') {
      walk(value, (inner) => {
        if (inner.key !== undefined && /script/i.test(inner.key)) refuse('runtime_mappings with a script', 'Elasticsearch');
      });
    }
    if (/script/i.test(key)) refuse(key, 'Elasticsearch');
  });
}

function isStreamParameter(key: string): boolean {
  return key.startsWith('stream.');
}

/**
 * Refuses local params (`{!...}` in any name or value), `qt` (another handler),
 * `shards` (other hosts), `stream.*` (remote or local files) and `wt` other than json.
 */
export function checkSolrRawQuery(body: unknown): void {
  walk(body, ({ key, value }) => {
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
