import { InvalidQueryNodeError } from './leaf-values';
import { escapeSolr, toSolrQuery, toSolrRequest } from './solr';
import { DEFAULT_FIELD_SCHEMA } from './schema';
import { INVALID_NODES, q, refusal, request } from '../../../test/support/search-query-translate';

const solr = (text: string) => toSolrQuery(q(text), DEFAULT_FIELD_SCHEMA);

describe('escapeSolr', () => {
  it('backslashes everything but letters and digits', () => {
    expect(escapeSolr('a b+c-d{!x}')).toBe('a\\ b\\+c\\-d\\{\\!x\\}');
    expect(escapeSolr('Éé9中')).toBe('Éé9中');
    expect(escapeSolr('😀')).toBe('\\😀');
  });
});

describe('toSolrQuery', () => {
  it('writes every node kind as explicit, escaped Lucene syntax', () => {
    expect(solr('*:*')).toBe('*:*');
    expect(solr('Fox')).toBe('content:fox');
    expect(solr("doesn't")).toBe("content:doesn\\'t");
    expect(solr('"Brown fox"')).toBe('content:"brown fox"');
    expect(solr('quick*')).toBe('content:quick*');
    expect(solr('author:Ann\\ Sm*')).toBe('author:Ann\\ Sm*');
    expect(solr('author:"Ann Smith"')).toBe('author:Ann\\ Smith');
    expect(solr('mime_type:application/pdf')).toBe('mime_type:application\\/pdf');
    expect(solr('tags:*')).toBe('tags:*');
    expect(solr('size:-5')).toBe('size:\\-5');
    expect(solr('size:1.5')).toBe('size:1\\.5');
    expect(solr('created:2024-01-15')).toBe('created:2024\\-01\\-15T00\\:00\\:00\\.000Z');
    expect(solr('size:[1 TO *]')).toBe('size:["1" TO *]');
    expect(solr('created:[* TO 2024-01-15]')).toBe('created:[* TO "2024-01-15T00:00:00.000Z"]');
  });

  it('writes booleans with an explicit occur on every clause', () => {
    expect(solr('a b')).toBe('(content:a content:b)');
    expect(solr('+a b -c')).toBe('(+content:a content:b -content:c)');
    expect(solr('a AND (b OR c)')).toBe('(+content:a +(content:b content:c))');
  });

  it('gives a pure negation something to subtract from', () => {
    expect(solr('-a')).toBe('(*:* -content:a)');
    expect(solr('a OR (NOT b AND NOT c)')).toBe('(content:a (*:* -content:b -content:c))');
  });

  it('matches nothing for an empty bool', () => {
    expect(toSolrQuery({ kind: 'bool', must: [], should: [], mustNot: [] }, DEFAULT_FIELD_SCHEMA)).toBe('(*:* -*:*)');
  });

  it('renders phrases and keyword values from a built AST safely too', () => {
    expect(toSolrQuery({ kind: 'phrase', field: 'title', value: 'A "B" \\ c' }, DEFAULT_FIELD_SCHEMA)).toBe('title:"a b c"');
    expect(toSolrQuery({ kind: 'phrase', field: 'author', value: '{!join}x' }, DEFAULT_FIELD_SCHEMA)).toBe('author:\\{\\!join\\}x');
    expect(toSolrQuery({ kind: 'term', field: 'title', value: 'Two Words' }, DEFAULT_FIELD_SCHEMA)).toBe('title:"two words"');
    expect(toSolrQuery({ kind: 'range', field: 'size' }, DEFAULT_FIELD_SCHEMA)).toBe('size:[* TO *]');
  });

  it('escapes a quote inside a word of a phrase (Hebrew gershayim: UAX#29 keeps צה"ל one word)', () => {
    expect(toSolrQuery({ kind: 'phrase', field: 'title', value: 'צה"ל קם' }, DEFAULT_FIELD_SCHEMA)).toBe('title:"צה\\"ל קם"');
    expect(toSolrQuery({ kind: 'term', field: 'title', value: 'צה"ל' }, DEFAULT_FIELD_SCHEMA)).toBe('title:צה\\"ל');
  });

  it.each(INVALID_NODES)('refuses %s, saying why', (_, node, message) => {
    const error = refusal(() => toSolrQuery(node, DEFAULT_FIELD_SCHEMA));
    expect(error).toBeInstanceOf(InvalidQueryNodeError);
    expect((error as Error).message).toBe(message);
  });
});

describe('toSolrRequest', () => {
  it('names every parameter itself: lucene parser, OR default, json, relevance then id', () => {
    expect(toSolrRequest(request({ query: q('fox') }))).toEqual({
      params: { q: 'content:fox', defType: 'lucene', 'q.op': 'OR', start: 0, rows: 20, sort: 'score desc,id asc', wt: 'json' },
    });
  });

  it('adds filters, fields, the sort with id last, and facets', () => {
    const body = toSolrRequest(
      request({
        filters: [q('tags:((a) OR (b))'), q('size:[1 TO 2]')],
        fields: ['id', 'title'],
        facetFields: ['tags', 'author'],
        facetLimit: 7,
        start: 40,
        rows: 10,
        sort: [
          { field: 'size', direction: 'desc' },
          { field: 'author', direction: 'asc' },
        ],
      }),
    );
    expect(body).toEqual({
      params: {
        q: '*:*',
        defType: 'lucene',
        'q.op': 'OR',
        start: 40,
        rows: 10,
        sort: 'size desc,author asc,id asc',
        wt: 'json',
        fq: ['(tags:a tags:b)', 'size:["1" TO "2"]'],
        fl: 'id,title',
        facet: 'true',
        'facet.field': ['tags', 'author'],
        'facet.mincount': 1,
        'facet.sort': 'count',
        'facet.limit': 7,
      },
    });
  });

  it('does not repeat id when the sort names it', () => {
    expect(toSolrRequest(request({ sort: [{ field: 'id', direction: 'desc' }] }))).toMatchObject({ params: { sort: 'id desc' } });
  });

  it('leaves out empty field and facet lists', () => {
    const { params } = toSolrRequest(request({ fields: [], facetFields: [] })) as { params: Record<string, unknown> };
    expect(Object.keys(params)).not.toEqual(expect.arrayContaining(['fl']));
    expect(params.facet).toBeUndefined();
  });

  it('refuses invalid field names in fl, sort and facet.field', () => {
    expect(() => toSolrRequest(request({ fields: ['{!func}x'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toSolrRequest(request({ facetFields: ['a b'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toSolrRequest(request({ sort: [{ field: 'sum(a,b)', direction: 'asc' }] }))).toThrow(InvalidQueryNodeError);
  });
});
