/**
 * QueryNode → Elasticsearch query DSL. Only structured queries are written
 * (match, match_phrase, term, prefix, range, exists, bool), never query_string
 * or simple_query_string, so no user text is read as Elasticsearch syntax.
 * Text fields are mapped with the `standard` analyzer (the same tokenizer and
 * lowercasing as Solr's text_general), so a word is matched by `match` and a
 * phrase by `match_phrase` on the same words.
 */
import { type QueryNode, type SearchRequest, TIE_BREAK_FIELD } from './ast';
import { type FieldSchema, fieldTypeOf } from './schema';
import {
  InvalidQueryNodeError,
  checkedField,
  dateValue,
  keywordValue,
  numberValue,
  textPrefix,
  textWords,
} from './leaf-values';

type EsQuery = Record<string, unknown>;

function exactValue(value: string, type: 'keyword' | 'number' | 'date'): string | number {
  if (type === 'number') return numberValue(value);
  if (type === 'date') return dateValue(value);
  return keywordValue(value);
}

function rangeBound(value: string, type: 'number' | 'date'): string | number {
  return type === 'number' ? numberValue(value) : dateValue(value);
}

export function toElasticsearchQuery(node: QueryNode, schema: FieldSchema): EsQuery {
  switch (node.kind) {
    case 'all':
      return { match_all: {} };
    case 'bool': {
      const bool: Record<string, unknown> = {};
      if (node.must.length > 0) bool.must = node.must.map((child) => toElasticsearchQuery(child, schema));
      if (node.should.length > 0) bool.should = node.should.map((child) => toElasticsearchQuery(child, schema));
      if (node.mustNot.length > 0) bool.must_not = node.mustNot.map((child) => toElasticsearchQuery(child, schema));
      // An empty bool would match everything in Elasticsearch; the AST's empty bool matches nothing.
      if (Object.keys(bool).length === 0) bool.must_not = [{ match_all: {} }];
      // Stated rather than left to the default, which changes when a bool sits in filter context.
      if (node.must.length === 0 && node.should.length > 0) bool.minimum_should_match = 1;
      return { bool };
    }
    case 'exists':
      return { exists: { field: checkedField(node.field) } };
    case 'range': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'number' && type !== 'date') throw new InvalidQueryNodeError(`range on ${type} field '${field}'`);
      const bounds: Record<string, string | number> = {};
      if (node.low !== undefined) bounds.gte = rangeBound(node.low, type);
      if (node.high !== undefined) bounds.lte = rangeBound(node.high, type);
      return Object.keys(bounds).length === 0 ? { exists: { field } } : { range: { [field]: bounds } };
    }
    case 'prefix': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type === 'text') return { prefix: { [field]: { value: textPrefix(node.value) } } };
      if (type === 'keyword') return { prefix: { [field]: { value: keywordValue(node.value) } } };
      throw new InvalidQueryNodeError(`prefix on ${type} field '${field}'`);
    }
    case 'term':
    case 'phrase': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'text') return { term: { [field]: { value: exactValue(node.value, type) } } };
      const words = textWords(node.value);
      if (words.length === 1) return { match: { [field]: { query: words[0], operator: 'and' } } };
      return { match_phrase: { [field]: { query: words.join(' ') } } };
    }
  }
}

function sortClause(request: SearchRequest): Record<string, { order: 'asc' | 'desc' }>[] {
  const clauses = request.sort.map((spec) => ({
    [checkedField(spec.field)]: { order: spec.direction === 'desc' ? ('desc' as const) : ('asc' as const) },
  }));
  if (clauses.length === 0) clauses.push({ _score: { order: 'desc' } });
  if (!request.sort.some((spec) => spec.field === TIE_BREAK_FIELD)) clauses.push({ [TIE_BREAK_FIELD]: { order: 'asc' } });
  return clauses;
}

/** Elasticsearch _search body (query, from, size, sort, _source, aggs). */
export function toElasticsearchRequest(request: SearchRequest): Record<string, unknown> {
  const bool: Record<string, unknown> = { must: [toElasticsearchQuery(request.query, request.schema)] };
  if (request.filters.length > 0) bool.filter = request.filters.map((filter) => toElasticsearchQuery(filter, request.schema));
  const body: Record<string, unknown> = {
    query: { bool },
    from: request.start,
    size: request.rows,
    sort: sortClause(request),
    // numFound must be exact, as Solr's and MongoDB's counts are (the default stops counting at 10,000).
    track_total_hits: true,
  };
  if (request.fields && request.fields.length > 0) body._source = request.fields.map(checkedField);
  const facetFields = request.facetFields ?? [];
  if (facetFields.length > 0) {
    body.aggs = Object.fromEntries(
      facetFields.map((field) => [
        checkedField(field),
        {
          terms: {
            field,
            size: request.facetLimit,
            min_doc_count: 1,
            order: [{ _count: 'desc' }, { _key: 'asc' }],
          },
        },
      ]),
    );
  }
  return body;
}
