/**
 * Whatever a user sends as q or fq: the parser answers a QueryNode or a
 * SearchSyntaxError (nothing else escapes), and what the translators write
 * carries no user text as engine syntax.
 */
import fc from 'fast-check';
import { type QueryNode, SearchSyntaxError } from './ast';
import { toElasticsearchRequest } from './elasticsearch';
import { MONGO_OPERATORS, toMongoRequest } from './mongo';
import { parseQuery } from './parser';
import { DEFAULT_FIELD_SCHEMA } from './schema';
import { toSolrRequest } from './solr';
import { request } from '../../../test/support/search-query-translate';

/** Pieces users (and attackers) type: language syntax, engine syntax of all three engines, words. */
const PIECES = [
  ' ', '  ', '(', ')', '"', '\\', ':', '*', '+', '-', '!', '?', '~', '^', '[', ']', '{', '}', '/', '&&', '||', "'", '.', ',',
  'AND', 'OR', 'NOT', 'TO', ' AND ', ' OR ', 'NOT ', '*:*', '[1 TO 5]', '[* TO *]', '{!', '{!lucene}', '{!join from=a to=b}',
  '$where', '$function', '$gt', '$regex', '$ne', '{"$where":"1"}', 'query_string', 'simple_query_string', '_query_:',
  '_val_:', 'script', 'content:', 'title:', 'author:', 'tags:', 'size:', 'created:', 'prop_x:', 'a.b:', '$x:', 'fox',
  'Brown', 'café', '中文', "doesn't", '42', '-3.5', '1e3', '2024-01-15', '2024-01-15T10:00:00Z', '😀', '\t', '\n',
];

const userText = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }).map((pieces) => pieces.join('')),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
);

function parseOrSyntaxError(text: string, parameter: 'q' | 'fq'): QueryNode | undefined {
  try {
    return parseQuery(text, parameter);
  } catch (error) {
    if (!(error instanceof SearchSyntaxError)) throw error;
    expect(error.parameter).toBe(parameter);
    expect(error.position).toBeGreaterThanOrEqual(0);
    expect(error.position).toBeLessThanOrEqual(text.length);
    return undefined;
  }
}

/** Every string and every member name anywhere in `value`. */
function* stringsAndKeys(value: unknown): Generator<{ key?: string; text?: string }> {
  if (typeof value === 'string') yield { text: value };
  else if (Array.isArray(value)) for (const item of value) yield* stringsAndKeys(item);
  else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, member] of Object.entries(value)) {
      yield { key };
      yield* stringsAndKeys(member);
    }
  }
}

const STRUCTURED_QUERIES = new Set(['bool', 'match_all', 'match', 'match_phrase', 'term', 'prefix', 'range', 'exists']);

/** The query kinds of an Elasticsearch query, its bool clauses included (anything odd is listed as found). */
function queryKinds(query: unknown): string[] {
  const keys = Object.keys(query as object);
  if (keys.length !== 1) return [`several kinds: ${keys.join(',')}`];
  if (keys[0] !== 'bool') return keys;
  const kinds = ['bool'];
  for (const [occur, clauses] of Object.entries((query as { bool: Record<string, unknown> }).bool)) {
    if (occur === 'minimum_should_match') continue;
    if (!['must', 'should', 'must_not'].includes(occur)) kinds.push(`bool member ${occur}`);
    else for (const clause of clauses as unknown[]) kinds.push(...queryKinds(clause));
  }
  return kinds;
}

describe('q and fq from anyone', () => {
  it('parse to a QueryNode or a SearchSyntaxError, and translate without passing engine syntax through', () => {
    fc.assert(
      fc.property(userText, fc.array(userText, { maxLength: 2 }), (qText, fqTexts) => {
        const query = parseOrSyntaxError(qText, 'q');
        const filters = fqTexts.map((text) => parseOrSyntaxError(text, 'fq')).filter((node): node is QueryNode => node !== undefined);
        if (query === undefined) return;
        const searchRequest = request({ query, filters, schema: DEFAULT_FIELD_SCHEMA, facetFields: ['tags'] });

        const solr = toSolrRequest(searchRequest);
        const solrProblems = [...stringsAndKeys(solr)].filter(
          ({ key, text }) =>
            text?.includes('{!') ||
            // Solr's magic fields, where a quoted value is parsed as a query (with local params)
            /(^|[\s(+-])_(query|val)_:/.test(text ?? '') ||
            (key !== undefined && key !== 'params' && !/^(q|fq|defType|q\.op|start|rows|sort|wt|fl|facet(\.[a-z]+)?)$/.test(key)),
        );
        expect(solrProblems).toEqual([]);

        const es = toElasticsearchRequest(searchRequest) as { query: { bool: { must: unknown[]; filter?: unknown[] } } };
        const esKinds = [...es.query.bool.must, ...(es.query.bool.filter ?? [])].flatMap(queryKinds);
        expect(esKinds.filter((kind) => !STRUCTURED_QUERIES.has(kind))).toEqual([]);

        const mongo = toMongoRequest(searchRequest);
        const operators = [...stringsAndKeys(mongo)].flatMap(({ key }) => (key?.startsWith('$') ? [key] : []));
        expect(operators.filter((operator) => !MONGO_OPERATORS.has(operator))).toEqual([]);
      }),
      { numRuns: 1000 },
    );
  });
});
