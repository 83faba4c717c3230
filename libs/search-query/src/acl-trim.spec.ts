import { InvalidArgumentError } from '@gateway/errors';
import {
  aclPrincipals,
  checkElasticsearchTrimmedRawQuery,
  checkOpenSearchTrimmedRawQuery,
  checkMongoTrimmedRawQuery,
  checkSolrTrimmedRawQuery,
  elasticsearchAclFilter,
  mongoAclFilter,
  solrAclFilter,
  trimElasticsearchBody,
  trimMongoFilter,
  trimMongoPipeline,
  trimMongoRequest,
  trimSolrRequest,
} from './acl-trim';

const BOB = ['bob', '__everyone__', 'staff'];

describe('aclPrincipals', () => {
  it('is the user name, __everyone__ and the groups, each once', () => {
    expect(aclPrincipals('bob')).toEqual(['bob', '__everyone__']);
    expect(aclPrincipals('bob', ['staff', 'finance', 'staff', 'bob'])).toEqual(['bob', '__everyone__', 'staff', 'finance']);
  });

  it.each(['a,b', 'a b', '{!x}', 'a"b', '', 'x'.repeat(129), '-lead', 'a}b'])('refuses the principal %j (it would reach Solr syntax)', (bad) => {
    expect(() => aclPrincipals('bob', [bad])).toThrow(/Invalid principal/);
    expect(() => solrAclFilter([bad])).toThrow(/Invalid principal/);
  });

  it('accepts the whole principal alphabet up to 128 characters', () => {
    expect(aclPrincipals('A9_.@-z', ['g'.repeat(128)])).toEqual(['A9_.@-z', '__everyone__', 'g'.repeat(128)]);
  });

  it('refuses to trim to no principal at all (that would be a filter matching nothing, or nothing)', () => {
    expect(() => solrAclFilter([])).toThrow(/at least one principal/);
    expect(() => elasticsearchAclFilter([])).toThrow(/at least one principal/);
    expect(() => mongoAclFilter([])).toThrow(/at least one principal/);
  });
});

describe('Solr trimming', () => {
  it('is a terms query on acl_read', () => {
    expect(solrAclFilter(BOB)).toBe('{!terms f=acl_read}bob,__everyone__,staff');
  });

  it('adds its fq beside the caller\'s, whether they sent none, one or several', () => {
    const fq = '{!terms f=acl_read}bob,__everyone__,staff';
    expect(trimSolrRequest({}, BOB)).toEqual({ params: { fq: [fq] } });
    expect(trimSolrRequest({ query: 'x', params: { fq: 'a:1', rows: 3 } }, BOB)).toEqual({ query: 'x', params: { fq: ['a:1', fq], rows: 3 } });
    expect(trimSolrRequest({ params: { fq: ['a:1', 'b:2'] } }, BOB)).toEqual({ params: { fq: ['a:1', 'b:2', fq] } });
  });

  it('leaves the request it was given unchanged', () => {
    const request = { params: { fq: ['a:1'] } };
    trimSolrRequest(request, BOB);
    expect(request).toEqual({ params: { fq: ['a:1'] } });
  });

  it.each([
    ['a facet domain query', { query: '*:*', facet: { all: { type: 'terms', field: 'author', domain: { query: '*:*' } } } }, 'a facet domain'],
    ['the terms component', { params: { q: '*:*', terms: 'true', 'terms.fl': 'content' } }, 'terms'],
    ['a terms.* parameter alone', { params: { 'terms.fl': 'content' } }, 'terms.fl'],
    ['terms=true alone', { params: { terms: 'true' } }, 'terms (the terms component)'],
    ['MoreLikeThis', { params: { q: 'id:x', mlt: 'true' } }, 'mlt'],
    ['an mlt.* parameter', { params: { 'mlt.fl': 'content' } }, 'mlt.fl'],
    ['expand', { params: { expand: 'true' } }, 'expand'],
    ['expand.fq (it replaces the filters)', { params: { 'expand.fq': '*:*' } }, 'expand.fq'],
    ['json.facet', { params: { 'json.facet': '{x:{type:terms,field:author}}' } }, 'json.facet'],
    ['a json parameter', { params: { json: '{"query":"*:*"}' } }, 'json'],
    ['explainOther', { params: { q: 'id:x', debugQuery: 'true', explainOther: '*:*' } }, 'explainOther'],
    ['the [subquery] transformer', { params: { fl: 'id,s:[subquery]', 's.q': '*:*' } }, '[subquery]'],
    ['the [child] transformer with spaces', { fields: ['id', '[ child limit=10]'] }, '[child]'],
  ])('refuses %s', (_what, body, named) => {
    let error: unknown;
    try {
      checkSolrTrimmedRawQuery(body);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).details).toMatchObject({ parameter: 'body' });
    expect((error as InvalidArgumentError).code).toBe('RAW_QUERY_REFUSED');
    expect((error as Error).message).toContain(named);
    expect((error as Error).message).toContain('is not allowed in a raw Solr query on a permission-trimmed connection');
  });

  it('lets the usual raw requests through', () => {
    for (const body of [
      { query: 'title:report', filter: ['author:alice'], limit: 5, fields: ['id', 'title'] },
      { params: { q: '*:*', fq: 'tags:x', facet: 'true', 'facet.field': 'author', rows: 3, fl: 'id,[docid]' } },
      { query: '*:*', facet: { authors: { type: 'terms', field: 'author', facet: { n: 'unique(tags)' } } } },
      { params: { q: '*:*', fq: null, rows: [null, 3] } },
      { params: { q: 'title:terms', group: 'true', 'group.field': 'author', expanded: 'x', mltx: 1, jsonish: 2, termsx: 3 } },
    ]) {
      expect(() => checkSolrTrimmedRawQuery(body)).not.toThrow();
    }
  });
});

describe('Elasticsearch trimming', () => {
  const filter = { terms: { acl_read: BOB } };

  it('wraps the query in a bool whose filter is the acl terms', () => {
    expect(trimElasticsearchBody({ query: { match: { content: 'x' } }, size: 3 }, BOB)).toEqual({
      query: { bool: { must: [{ match: { content: 'x' } }], filter: [filter] } },
      size: 3,
    });
  });

  it('trims a body without a query as match_all', () => {
    expect(trimElasticsearchBody({ aggs: { a: { terms: { field: 'author' } } } }, BOB)).toEqual({
      query: { bool: { must: [{ match_all: {} }], filter: [filter] } },
      aggs: { a: { terms: { field: 'author' } } },
    });
  });

  it('keeps a top-level bool with should clauses inside the must (a should cannot satisfy the filter)', () => {
    const query = { bool: { should: [{ match_all: {} }], minimum_should_match: 0 } };
    expect(trimElasticsearchBody({ query, post_filter: { match_all: {} } }, BOB)).toEqual({
      query: { bool: { must: [query], filter: [filter] } },
      post_filter: { match_all: {} },
    });
  });

  it.each([
    ['a global aggregation', { aggs: { all: { global: {}, aggs: { a: { terms: { field: 'author' } } } } } }, 'global'],
    ['a global aggregation nested deep', { aggs: { x: { filter: { match_all: {} }, aggs: { all: { global: {} } } } } }, 'global'],
    ['significant_terms', { aggs: { s: { significant_terms: { field: 'tags' } } } }, 'significant_terms'],
    ['significant_text', { aggs: { s: { significant_text: { field: 'content' } } } }, 'significant_text'],
    ['a background_filter', { aggs: { s: { sampler: {}, background_filter: { match_all: {} } } } }, 'background_filter'],
    ['a suggester', { suggest: { s: { text: 'x', term: { field: 'content' } } } }, 'suggest'],
    ['top-level knn', { knn: { field: 'v', query_vector: [1], k: 1, num_candidates: 1 } }, 'knn'],
    ['a retriever', { retriever: { standard: { query: { match_all: {} } } } }, 'retriever'],
    ['sub_searches', { sub_searches: [{ query: { match_all: {} } }] }, 'sub_searches'],
    ['rank', { rank: { rrf: {} } }, 'rank'],
    ['has_child', { query: { has_child: { type: 'c', query: { match_all: {} }, inner_hits: {} } } }, 'has_child'],
    ['has_parent', { query: { has_parent: { parent_type: 'p', query: { match_all: {} } } } }, 'has_parent'],
    ['parent_id', { query: { parent_id: { type: 'c', id: '1' } } }, 'parent_id'],
    ['a children aggregation', { aggs: { c: { children: { type: 'c' } } } }, 'children'],
    ['a parent aggregation', { aggs: { p: { parent: { type: 'c' } } } }, 'parent'],
  ])('refuses %s', (_what, body, named) => {
    expect(() => checkElasticsearchTrimmedRawQuery(body)).toThrow(new RegExp(`^${named} is not allowed in a raw Elasticsearch query on a permission-trimmed connection$`));
  });

  it('lets the usual raw requests through, post_filter and ordinary aggregations included', () => {
    expect(() =>
      checkElasticsearchTrimmedRawQuery({
        query: { bool: { should: [{ match: { content: 'x' } }] } },
        post_filter: { term: { author: 'alice' } },
        aggs: { authors: { terms: { field: 'author' }, aggs: { f: { filter: { term: { tags: 'x' } } } } } },
        size: 5,
      }),
    ).not.toThrow();
  });
});

describe('OpenSearch trimming', () => {
  it('refuses the members Elasticsearch refuses, naming OpenSearch', () => {
    expect(() => checkOpenSearchTrimmedRawQuery({ aggs: { all: { global: {} } } })).toThrow(
      /^global is not allowed in a raw OpenSearch query on a permission-trimmed connection$/,
    );
    expect(() => checkOpenSearchTrimmedRawQuery({ suggest: { s: { text: 'x', term: { field: 'content' } } } })).toThrow(/^suggest is not allowed/);
  });

  it('lets ordinary requests through', () => {
    expect(() => checkOpenSearchTrimmedRawQuery({ query: { match: { content: 'x' } }, aggs: { a: { terms: { field: 'author' } } } })).not.toThrow();
  });
});

describe('MongoDB trimming', () => {
  const acl = { acl_read: { $in: BOB } };

  it('is $in on acl_read, alone for an empty filter and beside the filter in $and otherwise', () => {
    expect(mongoAclFilter(BOB)).toEqual(acl);
    expect(trimMongoFilter({}, BOB)).toEqual(acl);
    expect(trimMongoFilter({ $or: [{ author: 'x' }, {}] }, BOB)).toEqual({ $and: [{ $or: [{ author: 'x' }, {}] }, acl] });
    expect(trimMongoFilter({ acl_read: { $exists: true } }, BOB)).toEqual({ $and: [{ acl_read: { $exists: true } }, acl] });
  });

  it('puts the $match first in a pipeline', () => {
    expect(trimMongoPipeline([{ $group: { _id: '$author' } }], BOB)).toEqual([{ $match: acl }, { $group: { _id: '$author' } }]);
    expect(trimMongoPipeline([], BOB)).toEqual([{ $match: acl }]);
  });

  it('trims every part of a request: the find and count filter, each facet pipeline, both missing-last parts; the rest as given', () => {
    const request = {
      filter: { author: 'x' },
      projection: { id: 1 as const },
      sort: { title: 1 as const, id: 1 as const },
      skip: 10,
      limit: 5,
      facetPipelines: { author: [{ $match: { author: 'x' } }, { $group: { _id: '$author' } }], tags: [] },
      missingLast: { field: 'title', withValue: { title: { $exists: true } }, withoutValue: { title: { $exists: false } } },
    };
    const before = JSON.stringify(request);
    expect(trimMongoRequest(request, BOB)).toEqual({
      filter: { $and: [{ author: 'x' }, acl] },
      projection: { id: 1 },
      sort: { title: 1, id: 1 },
      skip: 10,
      limit: 5,
      facetPipelines: { author: [{ $match: acl }, { $match: { author: 'x' } }, { $group: { _id: '$author' } }], tags: [{ $match: acl }] },
      missingLast: { field: 'title', withValue: { $and: [{ title: { $exists: true } }, acl] }, withoutValue: { $and: [{ title: { $exists: false } }, acl] } },
    });
    expect(JSON.stringify(request)).toBe(before);
    const plain = trimMongoRequest({ filter: {}, sort: { id: 1 }, skip: 0, limit: 10, facetPipelines: {} }, BOB);
    expect(plain).toEqual({ filter: acl, sort: { id: 1 }, skip: 0, limit: 10, facetPipelines: {} });
    expect('missingLast' in plain).toBe(false);
  });

  it.each([
    ['$unionWith', { filter: { x: 1 }, pipeline: [{ $unionWith: { coll: 'docs' } }] }],
    ['$lookup', { pipeline: [{ $lookup: { from: 'docs', pipeline: [], as: 'all' } }] }],
    ['$graphLookup', [{ $graphLookup: { from: 'docs' } }]],
    ['$facet', { pipeline: [{ $facet: { a: [] } }] }],
  ])('refuses %s anywhere', (named, body) => {
    expect(() => checkMongoTrimmedRawQuery(body)).toThrow(new RegExp(`^\\${named} is not allowed in a raw MongoDB query on a permission-trimmed connection$`));
  });

  it('lets a find with $or at the top through (the $and around it keeps it inside)', () => {
    expect(() => checkMongoTrimmedRawQuery({ filter: { $or: [{ acl_read: 'alice' }, { author: { $exists: true } }] }, limit: 3 })).not.toThrow();
  });
});
