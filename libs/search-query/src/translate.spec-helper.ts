import type { QueryNode, SearchRequest } from './ast';
import { parseQuery } from './parser';
import { DEFAULT_FIELD_SCHEMA } from './schema';

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

/** AST nodes the parser never builds; translators must refuse them. */
export const INVALID_NODES: [string, QueryNode][] = [
  ['a field name that is an operator', { kind: 'term', field: '$where', value: 'x' }],
  ['a Solr magic field', { kind: 'exists', field: '_query_' }],
  ['a text value without words', { kind: 'term', field: 'content', value: '...' }],
  ['a text prefix of two words', { kind: 'prefix', field: 'content', value: 'a b' }],
  ['an empty keyword', { kind: 'term', field: 'author', value: '' }],
  ['an empty keyword prefix', { kind: 'prefix', field: 'author', value: '' }],
  ['a number that is not one', { kind: 'term', field: 'size', value: '1 OR 2' }],
  ['a date that is not one', { kind: 'term', field: 'created', value: 'NOW-1DAY' }],
  ['a prefix on a number field', { kind: 'prefix', field: 'size', value: '1' }],
  ['a prefix on a date field', { kind: 'prefix', field: 'created', value: '2024' }],
  ['a range on a keyword field', { kind: 'range', field: 'author', low: 'a' }],
  ['a range on a text field', { kind: 'range', field: 'title', low: 'a' }],
  ['a range bound that is not a number', { kind: 'range', field: 'size', low: '1', high: '*]' }],
  ['a range bound that is not a date', { kind: 'range', field: 'created', low: 'NOW' }],
  ['an invalid node inside a bool', { kind: 'bool', must: [], should: [], mustNot: [{ kind: 'exists', field: 'a b' }] }],
];
