/**
 * QueryNode → MongoDB filter (FerretDB 1.24 runs it). Values are only ever
 * operands of operators this file writes ($eq, $regex, $gte, ...); field names
 * are checked, so no user text becomes an operator or a JavaScript expression.
 *
 * MongoDB has no analyzer: a text field is matched with a case-insensitive
 * regular expression that rebuilds the word boundaries of Lucene's
 * StandardTokenizer (see words.ts), so a word or phrase matches the same
 * documents as on Solr and Elasticsearch.
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
import { escapeRegex, wordPattern } from './words';

type MongoFilter = Record<string, unknown>;

/** Matches no document. */
const NOTHING: MongoFilter = { _id: { $in: [] } };

function exactValue(value: string, type: 'keyword' | 'number' | 'date'): string | number | Date {
  if (type === 'number') return numberValue(value);
  if (type === 'date') return new Date(dateValue(value));
  return keywordValue(value);
}

function rangeBound(value: string, type: 'number' | 'date'): number | Date {
  return type === 'number' ? numberValue(value) : new Date(dateValue(value));
}

function allOf(filters: MongoFilter[]): MongoFilter {
  return filters.length === 1 ? filters[0] : { $and: filters };
}

function exists(field: string): MongoFilter {
  // Null and the empty list are no value on Solr and Elasticsearch either.
  return { [field]: { $exists: true, $nin: [null, []] } };
}

export function toMongoFilter(node: QueryNode, schema: FieldSchema): MongoFilter {
  switch (node.kind) {
    case 'all':
      return {};
    case 'bool': {
      const clauses: MongoFilter[] = node.must.map((child) => toMongoFilter(child, schema));
      if (clauses.length === 0 && node.should.length > 0) {
        clauses.push(node.should.length === 1 ? toMongoFilter(node.should[0], schema) : { $or: node.should.map((child) => toMongoFilter(child, schema)) });
      }
      if (node.mustNot.length > 0) clauses.push({ $nor: node.mustNot.map((child) => toMongoFilter(child, schema)) });
      return clauses.length === 0 ? NOTHING : allOf(clauses);
    }
    case 'exists':
      return exists(checkedField(node.field));
    case 'range': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'number' && type !== 'date') throw new InvalidQueryNodeError(`range on ${type} field '${field}'`);
      const bounds: Record<string, number | Date> = {};
      if (node.low !== undefined) bounds.$gte = rangeBound(node.low, type);
      if (node.high !== undefined) bounds.$lte = rangeBound(node.high, type);
      return Object.keys(bounds).length === 0 ? exists(field) : { [field]: bounds };
    }
    case 'prefix': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type === 'text') return { [field]: { $regex: wordPattern([textPrefix(node.value)], true), $options: 'i' } };
      if (type === 'keyword') return { [field]: { $regex: `^${escapeRegex(keywordValue(node.value))}` } };
      throw new InvalidQueryNodeError(`prefix on ${type} field '${field}'`);
    }
    case 'term':
    case 'phrase': {
      const field = checkedField(node.field);
      const type = fieldTypeOf(schema, field);
      if (type !== 'text') return { [field]: { $eq: exactValue(node.value, type) } };
      return { [field]: { $regex: wordPattern(textWords(node.value)), $options: 'i' } };
    }
  }
}

/** The operators toMongoFilter and the facet pipelines write; nothing else starting with '$' leaves this file. */
export const MONGO_OPERATORS: ReadonlySet<string> = new Set([
  '$and', '$or', '$nor', '$eq', '$in', '$nin', '$exists', '$regex', '$options', '$gte', '$lte',
  '$ne', '$match', '$unwind', '$group', '$sum', '$sort', '$limit',
]);

function facetPipeline(field: string, filter: MongoFilter, limit: number): Record<string, unknown>[] {
  return [
    { $match: filter },
    // Unwinding a single value yields it once; a missing value, null or [] yields nothing.
    { $unwind: `$${field}` },
    { $match: { [field]: { $ne: null } } },
    // One count per document and value, as Solr and Elasticsearch count a value repeated in one document once.
    { $group: { _id: { document: '$_id', value: `$${field}` } } },
    { $group: { _id: '$_id.value', count: { $sum: 1 } } },
    { $sort: { count: -1, _id: 1 } },
    { $limit: limit },
  ];
}

/**
 * Solr (sortMissingLast) and Elasticsearch put a document without a value for the first sort key last,
 * ascending too; MongoDB puts it first when ascending, and FerretDB 1.24 has no expression ($cond,
 * $ifNull) to sort on "has a value" instead. So for an ascending first key the find is split in two:
 * the documents with a value, then those without, each with the same sort (skip and limit run over
 * the two as over one list). A missing value in a later sort key still sorts first on MongoDB.
 */
export interface MongoMissingLast {
  field: string;
  /** `filter` and the field has a value: the first part of the answer. */
  withValue: Record<string, unknown>;
  /** `filter` and the field has no value: after every document of `withValue`. */
  withoutValue: Record<string, unknown>;
}

/** MongoDB find + one aggregation pipeline per facet field (FerretDB 1.24 has no $facet). */
export function toMongoRequest(request: SearchRequest): {
  filter: Record<string, unknown>;
  projection?: Record<string, 0 | 1>;
  sort: Record<string, 1 | -1>;
  skip: number;
  limit: number;
  facetPipelines: Record<string, Record<string, unknown>[]>;
  /** Set when the first sort key is ascending (not id, which every document has): see MongoMissingLast. */
  missingLast?: MongoMissingLast;
} {
  const parts = [request.query, ...request.filters]
    .map((node) => toMongoFilter(node, request.schema))
    .filter((filter) => Object.keys(filter).length > 0);
  const filter = parts.length === 0 ? {} : allOf(parts);
  const sort: Record<string, 1 | -1> = {};
  for (const spec of request.sort) sort[checkedField(spec.field)] = spec.direction === 'desc' ? -1 : 1;
  // MongoDB has no relevance: an empty sort is the tie-break alone.
  if (!(TIE_BREAK_FIELD in sort)) sort[TIE_BREAK_FIELD] = 1;
  const facetPipelines: Record<string, Record<string, unknown>[]> = {};
  for (const field of request.facetFields ?? []) {
    facetPipelines[checkedField(field)] = facetPipeline(field, filter, request.facetLimit);
  }
  const result: ReturnType<typeof toMongoRequest> = {
    filter,
    sort,
    skip: request.start,
    limit: request.rows,
    facetPipelines,
  };
  if (request.fields && request.fields.length > 0) {
    result.projection = Object.fromEntries(request.fields.map((field) => [checkedField(field), 1 as const]));
  }
  const [first] = request.sort;
  if (first && first.direction === 'asc' && first.field !== TIE_BREAK_FIELD) {
    const hasValue = exists(first.field);
    result.missingLast = {
      field: first.field,
      withValue: allOf([...parts, hasValue]),
      withoutValue: allOf([...parts, { $nor: [hasValue] }]),
    };
  }
  return result;
}

/**
 * The finds that answer a request with `missingLast`, in order, once the number of documents with
 * a value (countDocuments of `withValue`) is known: the window skip..skip+limit over the two parts.
 * Empty windows are left out (a MongoDB limit of 0 would mean "no limit").
 */
export function missingLastFinds(
  missingLast: MongoMissingLast,
  skip: number,
  limit: number,
  withValueCount: number,
): { filter: Record<string, unknown>; skip: number; limit: number }[] {
  const finds: { filter: Record<string, unknown>; skip: number; limit: number }[] = [];
  const fromWithValue = Math.min(limit, Math.max(0, withValueCount - skip));
  if (fromWithValue > 0) finds.push({ filter: missingLast.withValue, skip, limit: fromWithValue });
  const fromWithoutValue = limit - fromWithValue;
  if (fromWithoutValue > 0) {
    finds.push({ filter: missingLast.withoutValue, skip: Math.max(0, skip - withValueCount), limit: fromWithoutValue });
  }
  return finds;
}
