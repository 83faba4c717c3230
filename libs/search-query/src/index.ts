/**
 * The gateway's search language (spec 4.6 `q`/`fq`), parsed once into one AST
 * that each engine's translator turns into its own syntax. User text never
 * reaches an engine as engine syntax: translators escape every value.
 *
 * This file is the interface the parser/translator work (libs/search-query)
 * and the search connectors (libs/connector-solr, -elasticsearch, -opensearch, -mongodb)
 * agree on. Keep the exported names and shapes; add, don't rename.
 */
export { DEFAULT_FIELD, DEFAULT_FIELD_SCHEMA, fieldTypeOf, isValidFieldName } from './schema';
export type { FieldSchema, FieldType } from './schema';
export { SearchSyntaxError, TIE_BREAK_FIELD } from './ast';
export type { BoolNode, QueryNode, SearchRequest, SortSpec } from './ast';
export { MAX_DEPTH, MAX_TERMS, fieldsOf, parseQuery, parseSort } from './parser';
export { InvalidQueryNodeError } from './leaf-values';
export { escapeSolr, toSolrQuery, toSolrRequest } from './solr';
export { toElasticsearchQuery, toElasticsearchRequest } from './elasticsearch';
export { MONGO_OPERATORS, missingLastFinds, toMongoFilter, toMongoRequest } from './mongo';
export type { MongoMissingLast } from './mongo';
export { checkElasticsearchRawQuery, checkMongoRawQuery, checkOpenSearchRawQuery, checkSolrRawQuery } from './raw-guards';
export { wordsOf } from './words';
export {
  ACL_FIELD,
  EVERYONE,
  aclPrincipals,
  checkElasticsearchTrimmedRawQuery,
  checkMongoTrimmedRawQuery,
  checkOpenSearchTrimmedRawQuery,
  checkSolrTrimmedRawQuery,
  mongoAclFilter,
  solrAclFilter,
  elasticsearchAclFilter,
  trimElasticsearchBody,
  trimMongoFilter,
  trimMongoPipeline,
  trimMongoRequest,
  trimSolrRequest,
} from './acl-trim';
