/**
 * QueryNode → Solr standard-Lucene syntax, fully explicit and fully escaped:
 * every clause carries its +/- (so q.op cannot change the meaning), every value
 * is backslash-escaped or a quoted phrase of words, so no user character can
 * open local params, a function, a regular expression or a range.
 */
import { type QueryNode, type SearchRequest, TIE_BREAK_FIELD } from './ast';
import { type FieldSchema, fieldTypeOf } from './schema';
import {
  InvalidQueryNodeError,
  checkedField,
  dateValue,
  keywordValue,
  numberText,
  textPrefix,
  textWords,
} from './leaf-values';

/** Backslash before every character that is not a letter or digit (whitespace included). */
export function escapeSolr(value: string): string {
  let escaped = '';
  for (const character of value) escaped += /[\p{L}\p{N}]/u.test(character) ? character : `\\${character}`;
  return escaped;
}

function quotePhrase(words: readonly string[]): string {
  return `"${words.join(' ').replace(/[\\"]/g, '\\$&')}"`;
}

/** An exact value in the field's own form (numbers and dates normalised). */
function exactValue(value: string, type: 'keyword' | 'number' | 'date'): string {
  if (type === 'number') return escapeSolr(numberText(value));
  if (type === 'date') return escapeSolr(dateValue(value));
  return escapeSolr(keywordValue(value));
}

function rangeBound(value: string | undefined, type: 'number' | 'date'): string {
  if (value === undefined) return '*';
  return `"${type === 'number' ? numberText(value) : dateValue(value)}"`;
}

/** Matches no document (an empty boolean query). */
const NOTHING = '(*:* -*:*)';

export function toSolrQuery(node: QueryNode, schema: FieldSchema): string {
  switch (node.kind) {
    case 'all':
      return '*:*';
    case 'bool': {
      const must = node.must.map((child) => `+${toSolrQuery(child, schema)}`);
      const should = node.should.map((child) => toSolrQuery(child, schema));
      const mustNot = node.mustNot.map((child) => `-${toSolrQuery(child, schema)}`);
      if (must.length === 0 && should.length === 0) {
        return mustNot.length === 0 ? NOTHING : `(*:* ${mustNot.join(' ')})`;
      }
      return `(${[...must, ...should, ...mustNot].join(' ')})`;
    }
    case 'exists':
      return `${checkedField(node.field)}:*`;
    case 'range': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'number' && type !== 'date') throw new InvalidQueryNodeError(`range on ${type} field '${field}'`);
      return `${field}:[${rangeBound(node.low, type)} TO ${rangeBound(node.high, type)}]`;
    }
    case 'prefix': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type === 'text') return `${field}:${escapeSolr(textPrefix(node.value))}*`;
      if (type === 'keyword') return `${field}:${escapeSolr(keywordValue(node.value))}*`;
      throw new InvalidQueryNodeError(`prefix on ${type} field '${field}'`);
    }
    case 'term':
    case 'phrase': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'text') return `${field}:${exactValue(node.value, type)}`;
      const words = textWords(node.value);
      return words.length === 1 ? `${field}:${escapeSolr(words[0])}` : `${field}:${quotePhrase(words)}`;
    }
  }
}

function sortParameter(request: SearchRequest): string {
  const items = request.sort.map((spec) => `${checkedField(spec.field)} ${spec.direction === 'desc' ? 'desc' : 'asc'}`);
  if (items.length === 0) items.push('score desc');
  if (!request.sort.some((spec) => spec.field === TIE_BREAK_FIELD)) items.push(`${TIE_BREAK_FIELD} asc`);
  return items.join(',');
}

/**
 * Solr JSON request API body for /select. Parameters are named by the gateway
 * only: defType=lucene and q.op=OR are set here so a request handler's defaults
 * cannot reinterpret the query.
 */
export function toSolrRequest(request: SearchRequest): Record<string, unknown> {
  const params: Record<string, unknown> = {
    q: toSolrQuery(request.query, request.schema),
    defType: 'lucene',
    'q.op': 'OR',
    start: request.start,
    rows: request.rows,
    sort: sortParameter(request),
    wt: 'json',
  };
  if (request.filters.length > 0) params.fq = request.filters.map((filter) => toSolrQuery(filter, request.schema));
  if (request.fields && request.fields.length > 0) params.fl = request.fields.map(checkedField).join(',');
  const facetFields = request.facetFields ?? [];
  if (facetFields.length > 0) {
    Object.assign(params, {
      facet: 'true',
      'facet.field': facetFields.map(checkedField),
      'facet.mincount': 1,
      // Solr breaks equal counts by index order, which is value ascending.
      'facet.sort': 'count',
      'facet.limit': request.facetLimit,
    });
  }
  return { params };
}
