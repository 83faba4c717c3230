import type { FieldSchema } from './schema';

export type QueryNode =
  | { kind: 'all' }
  /** field:value. On text fields: one word (case-insensitive); elsewhere: the exact value. */
  | { kind: 'term'; field: string; value: string }
  /** field:"a b c": the words in this order, adjacent (text fields); exact value elsewhere. */
  | { kind: 'phrase'; field: string; value: string }
  /** field:val* (only a trailing `*`): words (text) or values (keyword) starting with `value`. */
  | { kind: 'prefix'; field: string; value: string }
  /** field:* : the field has a value. */
  | { kind: 'exists'; field: string }
  /** field:[low TO high], inclusive; undefined end = open (`*`). Numbers or ISO 8601 dates. */
  | { kind: 'range'; field: string; low?: string; high?: string }
  /**
   * Lucene boolean semantics, made explicit: a document matches when it matches
   * every `must`, none of `mustNot`, and — only when `must` is empty — at least
   * one `should`. A clause with only `mustNot` matches everything else.
   */
  | { kind: 'bool'; must: QueryNode[]; should: QueryNode[]; mustNot: QueryNode[] };

export type BoolNode = Extract<QueryNode, { kind: 'bool' }>;

/** Thrown for a syntax error; the service maps it to 400 naming the parameter and the position. */
export class SearchSyntaxError extends Error {
  constructor(
    readonly parameter: string,
    /** 0-based character offset in the parameter's value. */
    readonly position: number,
    /** What is wrong, without the parameter and position (the message adds them). */
    readonly reason: string,
  ) {
    super(`${parameter}: ${reason} at position ${position}`);
    this.name = 'SearchSyntaxError';
  }
}

export interface SortSpec {
  field: string;
  direction: 'asc' | 'desc';
}

/** A validated select, ready to translate. `sort` empty means relevance, then id. */
export interface SearchRequest {
  query: QueryNode;
  filters: QueryNode[];
  fields?: string[];
  facetFields?: string[];
  /** Buckets per facet field. */
  facetLimit: number;
  start: number;
  rows: number;
  sort: SortSpec[];
  schema: FieldSchema;
}

/** The field every engine sorts by last, so equal sort keys come back in one order everywhere. */
export const TIE_BREAK_FIELD = 'id';
