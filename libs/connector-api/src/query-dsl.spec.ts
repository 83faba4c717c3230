import { DEFAULT_FIELD_SCHEMA, parseQuery, type SearchRequest } from '@gateway/search-query';
import { UpstreamError } from '@gateway/errors';
import { checkQueryDslBulk, queryDslIndexBody, queryDslResults } from './query-dsl';

const request = (extra: Partial<SearchRequest> = {}): SearchRequest => ({
  query: parseQuery('*:*', 'q'),
  filters: [],
  facetLimit: 100,
  start: 0,
  rows: 10,
  sort: [],
  schema: DEFAULT_FIELD_SCHEMA,
  ...extra,
});

describe('queryDslResults', () => {
  it('reads ids from _source.id else _id, and both forms of hits.total', () => {
    const hits = [{ _id: 'a', _source: { id: 'doc-a', author: 'ann' } }, { _id: 'b', _source: { author: 'ben' } }];
    const results = queryDslResults({ hits: { total: { value: 7 }, hits } }, request({ start: 2, rows: 2 }));
    expect(results).toMatchObject({ numFound: 7, start: 2, rows: 2 });
    expect(results.docs.map((d) => d.id)).toEqual(['doc-a', 'b']);
    expect(results.facets).toBeUndefined();
    expect(queryDslResults({ hits: { total: 3, hits: [] } }, request()).numFound).toBe(3);
    expect(queryDslResults({}, request()).numFound).toBe(0);
  });

  it('answers facets sorted by count then value, dates from the epoch key as ISO 8601 UTC', () => {
    const answer = {
      hits: { total: { value: 0 }, hits: [] },
      aggregations: {
        author: { buckets: [{ key: 'ben', doc_count: 1 }, { key: 'ann', doc_count: 1 }, { key: 'cy', doc_count: 4 }] },
        created: { buckets: [{ key: Date.UTC(2024, 0, 2), key_as_string: '2024-01-02', doc_count: 2 }] },
      },
    };
    const results = queryDslResults(answer, request({ facetFields: ['author', 'created', 'tags'] }));
    expect(results.facets).toEqual({
      author: [{ value: 'cy', count: 4 }, { value: 'ann', count: 1 }, { value: 'ben', count: 1 }],
      created: [{ value: '2024-01-02T00:00:00.000Z', count: 2 }],
      tags: [],
    });
  });
});

describe('checkQueryDslBulk', () => {
  it('passes an answer without errors and deletes of missing documents', () => {
    expect(() => checkQueryDslBulk('OpenSearch', { errors: false, items: [] })).not.toThrow();
    expect(() => checkQueryDslBulk('OpenSearch', { errors: true, items: [{ delete: { _id: 'x', status: 404, error: { type: 'not_found' } } }] }, true)).not.toThrow();
  });

  it('fails on the first refused item, naming the engine and the id', () => {
    const answer = { errors: true, items: [{ index: { _id: 'ok', status: 201 } }, { index: { _id: 'bad', status: 400, error: { type: 'mapper_parsing_exception', reason: 'failed to parse field [size]' } } }] };
    expect(() => checkQueryDslBulk('OpenSearch', answer)).toThrow(new UpstreamError("OpenSearch refused document 'bad': mapper_parsing_exception: failed to parse field [size]"));
  });
});

describe('queryDslIndexBody', () => {
  it('maps id and the index fields, prop_* as text, and the refresh interval', () => {
    const body = queryDslIndexBody(250);
    expect(body.settings).toEqual({ refresh_interval: '250ms' });
    expect(body.mappings).toMatchObject({
      dynamic_templates: [{ props: { match: 'prop_*', mapping: { type: 'text' } } }],
      properties: { id: { type: 'keyword' }, author: { type: 'keyword' }, content: { type: 'text' }, size: { type: 'long' }, created: { type: 'date' } },
    });
  });
});
