import { InvalidQueryNodeError } from './leaf-values';
import { MONGO_OPERATORS, missingLastFinds, toMongoFilter, toMongoRequest } from './mongo';
import { DEFAULT_FIELD_SCHEMA } from './schema';
import { INVALID_NODES, q, refusal, request } from '../../../test/support/search-query-translate';
import { wordPattern } from './words';

const mongo = (text: string) => toMongoFilter(q(text), DEFAULT_FIELD_SCHEMA);
const text = (field: string, words: string[], longest: string, prefix = false) => ({
  $and: [{ [field]: { $regex: `(?i:${longest})` } }, { [field]: { $regex: wordPattern(words, prefix) } }],
});
const word = (field: string, value: string) => text(field, [value], value);

describe('toMongoFilter', () => {
  it('writes every node kind with operators only it chooses', () => {
    expect(mongo('*:*')).toEqual({});
    expect(mongo('Fox')).toEqual(word('content', 'fox'));
    expect(mongo('"Brown fox"')).toEqual(text('content', ['brown', 'fox'], 'brown'));
    expect(mongo('"a quick fox"')).toEqual(text('content', ['a', 'quick', 'fox'], 'quick'));
    expect(mongo('"fox dog"')).toEqual(text('content', ['fox', 'dog'], 'fox'));
    expect(mongo('Quick*')).toEqual(text('content', ['quick'], 'quick', true));
    expect(mongo('"example.com"')).toEqual(text('content', ['example.com'], 'example\\.com'));
    expect(mongo('author:A.n*')).toEqual({ author: { $regex: '^A\\.n' } });
    expect(mongo('author:"Ann Smith"')).toEqual({ author: { $eq: 'Ann Smith' } });
    expect(mongo('author:"$where"')).toEqual({ author: { $eq: '$where' } });
    expect(mongo('size:-5')).toEqual({ size: { $eq: -5 } });
    expect(mongo('created:2024-01-15')).toEqual({ created: { $eq: new Date('2024-01-15T00:00:00.000Z') } });
    expect(mongo('tags:*')).toEqual({ tags: { $exists: true, $nin: [null, []] } });
    expect(mongo('content:*')).toEqual({ content: { $exists: true, $nin: [null, []] } });
    expect(mongo('size:[1 TO *]')).toEqual({ size: { $gte: 1 } });
    expect(mongo('created:[* TO 2024-01-15]')).toEqual({ created: { $lte: new Date('2024-01-15T00:00:00.000Z') } });
    expect(mongo('size:[1 TO 2]')).toEqual({ size: { $gte: 1, $lte: 2 } });
  });

  it('writes Lucene booleans: shoulds only count without musts', () => {
    const [a, b, c] = ['a', 'b', 'c'].map((value) => word('content', value));
    expect(mongo('a b')).toEqual({ $or: [a, b] });
    expect(mongo('a -c')).toEqual({ $and: [a, { $nor: [c] }] });
    expect(mongo('a b -c')).toEqual({ $and: [{ $or: [a, b] }, { $nor: [c] }] });
    expect(mongo('+a b -c')).toEqual({ $and: [a, { $nor: [c] }] });
    expect(mongo('+a +b')).toEqual({ $and: [a, b] });
    expect(mongo('-a')).toEqual({ $nor: [a] });
  });

  it('matches nothing for an empty bool', () => {
    expect(toMongoFilter({ kind: 'bool', must: [], should: [], mustNot: [] }, DEFAULT_FIELD_SCHEMA)).toEqual({ _id: { $in: [] } });
  });

  it('renders built AST nodes the parser would have normalised', () => {
    expect(toMongoFilter({ kind: 'phrase', field: 'author', value: 'A b' }, DEFAULT_FIELD_SCHEMA)).toEqual({ author: { $eq: 'A b' } });
    expect(toMongoFilter({ kind: 'range', field: 'size' }, DEFAULT_FIELD_SCHEMA)).toEqual({ size: { $exists: true, $nin: [null, []] } });
  });

  it.each(INVALID_NODES)('refuses %s, saying why', (_, node, message) => {
    const error = refusal(() => toMongoFilter(node, DEFAULT_FIELD_SCHEMA));
    expect(error).toBeInstanceOf(InvalidQueryNodeError);
    expect((error as Error).message).toBe(message);
  });
});

describe('toMongoRequest', () => {
  it('sorts by id alone when no sort is given (MongoDB has no relevance)', () => {
    expect(toMongoRequest(request({ query: q('author:Ann'), start: 3, rows: 4 }))).toEqual({
      filter: { author: { $eq: 'Ann' } },
      sort: { id: 1 },
      skip: 3,
      limit: 4,
      facetPipelines: {},
    });
  });

  it('joins q and the filters, projects the fields and sorts with id last', () => {
    const result = toMongoRequest(
      request({
        query: q('author:Ann'),
        filters: [q('tags:a'), q('*:*')],
        fields: ['id', 'title'],
        sort: [
          { field: 'size', direction: 'desc' },
          { field: 'author', direction: 'asc' },
        ],
      }),
    );
    expect(result.filter).toEqual({ $and: [{ author: { $eq: 'Ann' } }, { tags: { $eq: 'a' } }] });
    expect(result.projection).toEqual({ id: 1, title: 1 });
    expect(Object.entries(result.sort)).toEqual([
      ['size', -1],
      ['author', 1],
      ['id', 1],
    ]);
  });

  it('splits the find when the first sort key is ascending, so documents without a value come last', () => {
    const hasSize = { size: { $exists: true, $nin: [null, []] } };
    const author = { author: { $eq: 'Ann' } };
    expect(toMongoRequest(request({ query: q('author:Ann'), sort: [{ field: 'size', direction: 'asc' }] })).missingLast).toEqual({
      field: 'size',
      withValue: { $and: [author, hasSize] },
      withoutValue: { $and: [author, { $nor: [hasSize] }] },
    });
    expect(toMongoRequest(request({ sort: [{ field: 'size', direction: 'asc' }] })).missingLast).toEqual({
      field: 'size',
      withValue: hasSize,
      withoutValue: { $nor: [hasSize] },
    });
  });

  it('needs no split for a descending first key, for id, or without a sort', () => {
    expect(toMongoRequest(request({ sort: [{ field: 'size', direction: 'desc' }, { field: 'author', direction: 'asc' }] })).missingLast).toBeUndefined();
    expect(toMongoRequest(request({ sort: [{ field: 'id', direction: 'asc' }] })).missingLast).toBeUndefined();
    expect(toMongoRequest(request()).missingLast).toBeUndefined();
  });

  it('keeps the sort on id as given', () => {
    expect(toMongoRequest(request({ sort: [{ field: 'id', direction: 'desc' }] })).sort).toEqual({ id: -1 });
  });

  it('leaves out an empty projection and facet list, as the other translators do', () => {
    const result = toMongoRequest(request({ fields: [], facetFields: [] }));
    expect(result.projection).toBeUndefined();
    expect(result.facetPipelines).toEqual({});
  });

  it('has an empty filter when every part matches everything', () => {
    expect(toMongoRequest(request({ filters: [q('*:*')] })).filter).toEqual({});
  });

  it('builds one facet pipeline per field: count documents per value, by count then value', () => {
    const { facetPipelines } = toMongoRequest(request({ query: q('tags:a'), facetFields: ['tags', 'size'], facetLimit: 5 }));
    expect(Object.keys(facetPipelines)).toEqual(['tags', 'size']);
    expect(facetPipelines.tags).toEqual([
      { $match: { tags: { $eq: 'a' } } },
      { $unwind: '$tags' },
      { $match: { tags: { $ne: null } } },
      { $group: { _id: { document: '$_id', value: '$tags' } } },
      { $group: { _id: '$_id.value', count: { $sum: 1 } } },
      { $sort: { count: -1, _id: 1 } },
      { $limit: 5 },
    ]);
  });

  it('refuses invalid field names in the projection, sort and facets', () => {
    expect(() => toMongoRequest(request({ fields: ['$where'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toMongoRequest(request({ facetFields: ['$x'] }))).toThrow(InvalidQueryNodeError);
    expect(() => toMongoRequest(request({ sort: [{ field: '$natural', direction: 'asc' }] }))).toThrow(InvalidQueryNodeError);
  });
});

describe('MONGO_OPERATORS', () => {
  /** Every member name starting with '$' anywhere in `value` (Dates are values). */
  function operatorsIn(value: unknown, found = new Set<string>()): Set<string> {
    if (Array.isArray(value)) for (const item of value) operatorsIn(item, found);
    else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
      for (const [key, member] of Object.entries(value)) {
        if (key.startsWith('$')) found.add(key);
        operatorsIn(member, found);
      }
    }
    return found;
  }

  it('names exactly the operators the translator writes, every node kind, facets and the missing-last split included', () => {
    const written = new Set<string>();
    const nodes = ['a b -c', '+a +b', 'size:[1 TO 2]', 'tags:*', 'author:An*', 'author:Ann', 'Quick*', '"brown fox"'].map(q);
    nodes.push({ kind: 'bool', must: [], should: [], mustNot: [] });
    for (const node of nodes) operatorsIn(toMongoFilter(node, DEFAULT_FIELD_SCHEMA), written);
    operatorsIn(toMongoRequest(request({ query: q('a -b'), facetFields: ['tags'], sort: [{ field: 'size', direction: 'asc' }] })), written);
    expect([...written].sort()).toEqual([...MONGO_OPERATORS].sort());
  });
});

describe('missingLastFinds', () => {
  const missingLast = { field: 'size', withValue: { w: 1 }, withoutValue: { wo: 1 } };

  it('reads the window from the documents with a value, then from those without', () => {
    expect(missingLastFinds(missingLast, 0, 10, 25)).toEqual([{ filter: { w: 1 }, skip: 0, limit: 10 }]);
    expect(missingLastFinds(missingLast, 20, 10, 25)).toEqual([
      { filter: { w: 1 }, skip: 20, limit: 5 },
      { filter: { wo: 1 }, skip: 0, limit: 5 },
    ]);
    expect(missingLastFinds(missingLast, 25, 10, 25)).toEqual([{ filter: { wo: 1 }, skip: 0, limit: 10 }]);
    expect(missingLastFinds(missingLast, 30, 10, 25)).toEqual([{ filter: { wo: 1 }, skip: 5, limit: 10 }]);
    expect(missingLastFinds(missingLast, 0, 10, 0)).toEqual([{ filter: { wo: 1 }, skip: 0, limit: 10 }]);
  });

  it('runs no find for zero rows', () => {
    expect(missingLastFinds(missingLast, 5, 0, 25)).toEqual([]);
  });
});
