import { toElasticsearchQuery, toElasticsearchRequest } from './elasticsearch';
import { InvalidQueryNodeError } from './leaf-values';
import { DEFAULT_FIELD_SCHEMA } from './schema';
import { INVALID_NODES, q, refusal, request } from '../../../test/support/search-query-translate';

const es = (text: string) => toElasticsearchQuery(q(text), DEFAULT_FIELD_SCHEMA);

describe('toElasticsearchQuery', () => {
  it('writes every node kind as a structured query', () => {
    expect(es('*:*')).toEqual({ match_all: {} });
    expect(es('Fox')).toEqual({ match: { content: { query: 'fox', operator: 'and' } } });
    expect(es('"Brown fox"')).toEqual({ match_phrase: { content: { query: 'brown fox' } } });
    expect(es('Quick*')).toEqual({ prefix: { content: { value: 'quick' } } });
    expect(es('author:An*')).toEqual({ prefix: { author: { value: 'An' } } });
    expect(es('author:"Ann Smith"')).toEqual({ term: { author: { value: 'Ann Smith' } } });
    expect(es('size:-5')).toEqual({ term: { size: { value: -5 } } });
    expect(es('created:2024-01-15')).toEqual({ term: { created: { value: '2024-01-15T00:00:00.000Z' } } });
    expect(es('tags:*')).toEqual({ exists: { field: 'tags' } });
    expect(es('size:[1 TO *]')).toEqual({ range: { size: { gte: 1 } } });
    expect(es('created:[* TO 2024-01-15]')).toEqual({ range: { created: { lte: '2024-01-15T00:00:00.000Z' } } });
    expect(es('size:[1 TO 2]')).toEqual({ range: { size: { gte: 1, lte: 2 } } });
  });

  it('writes booleans with only the lists that have clauses', () => {
    const a = { match: { content: { query: 'a', operator: 'and' } } };
    const b = { match: { content: { query: 'b', operator: 'and' } } };
    const c = { match: { content: { query: 'c', operator: 'and' } } };
    expect(es('a b')).toEqual({ bool: { should: [a, b], minimum_should_match: 1 } });
    expect(es('+a b -c')).toEqual({ bool: { must: [a], should: [b], must_not: [c] } });
    expect(es('a -c')).toEqual({ bool: { should: [a], must_not: [c], minimum_should_match: 1 } });
    expect(es('-a')).toEqual({ bool: { must_not: [a] } });
    expect(es('a AND b')).toEqual({ bool: { must: [a, b] } });
  });

  it('matches nothing for an empty bool (an empty Elasticsearch bool would match everything)', () => {
    expect(toElasticsearchQuery({ kind: 'bool', must: [], should: [], mustNot: [] }, DEFAULT_FIELD_SCHEMA)).toEqual({
      bool: { must_not: [{ match_all: {} }] },
    });
  });

  it('renders built AST nodes the parser would have normalised', () => {
    expect(toElasticsearchQuery({ kind: 'term', field: 'title', value: 'Two Words' }, DEFAULT_FIELD_SCHEMA)).toEqual({
      match_phrase: { title: { query: 'two words' } },
    });
    expect(toElasticsearchQuery({ kind: 'phrase', field: 'author', value: 'A b' }, DEFAULT_FIELD_SCHEMA)).toEqual({
      term: { author: { value: 'A b' } },
    });
    expect(toElasticsearchQuery({ kind: 'range', field: 'size' }, DEFAULT_FIELD_SCHEMA)).toEqual({ exists: { field: 'size' } });
  });

  it.each(INVALID_NODES)('refuses %s, saying why', (_, node, message) => {
    const error = refusal(() => toElasticsearchQuery(node, DEFAULT_FIELD_SCHEMA));
    expect(error).toBeInstanceOf(InvalidQueryNodeError);
    expect((error as Error).message).toBe(message);
  });
});

describe('toElasticsearchRequest', () => {
  it('puts q in must, counts exactly, and sorts by relevance then id', () => {
    expect(toElasticsearchRequest(request({ query: q('fox') }))).toEqual({
      query: { bool: { must: [{ match: { content: { query: 'fox', operator: 'and' } } }] } },
      from: 0,
      size: 20,
      sort: [{ _score: { order: 'desc' } }, { id: { order: 'asc' } }],
      track_total_hits: true,
    });
  });

  it('adds filters, _source, the sort with id last and terms aggregations ordered by count then value', () => {
    expect(
      toElasticsearchRequest(
        request({
          filters: [q('tags:a'), q('size:[1 TO 2]')],
          fields: ['id', 'title'],
          facetFields: ['tags', 'size'],
          facetLimit: 3,
          start: 5,
          rows: 6,
          sort: [
            { field: 'size', direction: 'desc' },
            { field: 'author', direction: 'asc' },
          ],
        }),
      ),
    ).toEqual({
      query: {
        bool: {
          must: [{ match_all: {} }],
          filter: [{ term: { tags: { value: 'a' } } }, { range: { size: { gte: 1, lte: 2 } } }],
        },
      },
      from: 5,
      size: 6,
      sort: [{ size: { order: 'desc' } }, { author: { order: 'asc' } }, { id: { order: 'asc' } }],
      track_total_hits: true,
      _source: ['id', 'title'],
      aggs: {
        tags: { terms: { field: 'tags', size: 3, min_doc_count: 1, order: [{ _count: 'desc' }, { _key: 'asc' }] } },
        size: { terms: { field: 'size', size: 3, min_doc_count: 1, order: [{ _count: 'desc' }, { _key: 'asc' }] } },
      },
    });
  });

  it('does not repeat id when the sort names it, and leaves out empty lists', () => {
    const body = toElasticsearchRequest(request({ sort: [{ field: 'id', direction: 'desc' }], fields: [], facetFields: [] }));
    expect(body.sort).toEqual([{ id: { order: 'desc' } }]);
    expect(body._source).toBeUndefined();
    expect(body.aggs).toBeUndefined();
  });

  it('refuses invalid field names in _source, sort and aggregations', () => {
    expect(() => toElasticsearchRequest(request({ fields: ['a b'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toElasticsearchRequest(request({ facetFields: ['a>b'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toElasticsearchRequest(request({ sort: [{ field: 'doc[\'a\']', direction: 'asc' }] }))).toThrow(InvalidQueryNodeError);
  });
});
