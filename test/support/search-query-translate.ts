import type { QueryNode, SearchRequest } from '../../libs/search-query/src/ast';
import { parseQuery } from '../../libs/search-query/src/parser';
import { DEFAULT_FIELD_SCHEMA } from '../../libs/search-query/src/schema';

export const q = (text: string): QueryNode => parseQuery(text, 'q');

export function request(overrides: Partial<SearchRequest> = {}): SearchRequest {
  return {
    query: { kind: 'all' },
    filters: [],
    facetLimit: 10,
    start: 0,
    rows: 20,
    sort: [],
    schema: DEFAULT_FIELD_SCHEMA,
    ...overrides,
  };
}

/**
 * AST nodes the parser never builds; translators must refuse them, with the message the search
 * service puts in its 400 (every translator words a refusal alike).
 */
export const INVALID_NODES: [string, QueryNode, string][] = [
  ['a field name that is an operator', { kind: 'term', field: '$where', value: 'x' }, "invalid field name '$where'"],
  ['a Solr magic field', { kind: 'exists', field: '_query_' }, "invalid field name '_query_'"],
  ['a text value without words', { kind: 'term', field: 'content', value: '...' }, "'...' has no words"],
  ['a text prefix of two words', { kind: 'prefix', field: 'content', value: 'a b' }, "prefix 'a b' is not one word"],
  ['an empty keyword', { kind: 'term', field: 'author', value: '' }, 'empty keyword value'],
  ['an empty keyword prefix', { kind: 'prefix', field: 'author', value: '' }, 'empty keyword value'],
  ['a number that is not one', { kind: 'term', field: 'size', value: '1 OR 2' }, "'1 OR 2' is not a number"],
  ['a date that is not one', { kind: 'term', field: 'created', value: 'NOW-1DAY' }, "'NOW-1DAY' is not an ISO 8601 timestamp"],
  ['a prefix on a number field', { kind: 'prefix', field: 'size', value: '1' }, "prefix on number field 'size'"],
  ['a prefix on a date field', { kind: 'prefix', field: 'created', value: '2024' }, "prefix on date field 'created'"],
  ['a range on a keyword field', { kind: 'range', field: 'author', low: 'a' }, "range on keyword field 'author'"],
  ['a range on a text field', { kind: 'range', field: 'title', low: 'a' }, "range on text field 'title'"],
  ['a range bound that is not a number', { kind: 'range', field: 'size', low: '1', high: '*]' }, "'*]' is not a number"],
  ['a range bound that is not a date', { kind: 'range', field: 'created', low: 'NOW' }, "'NOW' is not an ISO 8601 timestamp"],
  ['an invalid node inside a bool', { kind: 'bool', must: [], should: [], mustNot: [{ kind: 'exists', field: 'a b' }] }, "invalid field name 'a b'"],
];

/** What a translation threw (or 'accepted'), so a test can assert both the error's kind and its message. */
export function refusal(translate: () => unknown): unknown {
  try {
    translate();
  } catch (error) {
    return error;
  }
  return 'accepted';
}
