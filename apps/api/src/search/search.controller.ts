import { Body, Get, Param, Post, Query, applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiParam, ApiQuery } from '@nestjs/swagger';
import type { SearchResults } from '@gateway/connector-api';
import { CurrentUser, type AuthenticatedUser } from '../auth/auth.decorators';
import { Route, RouteFamily } from '../common/routes';
import { AcceptsQuery } from '../common/strict-input.guard';
import { FacetBucketDto, SelectResultsDto } from './search.dto';
import { SearchParams } from './search-params';
import { SearchService, SELECT_PARAMETERS } from './search.service';

const CONNECTOR = ApiParam({ name: 'connectorId', description: 'A search connection (typeId solr, elasticsearch, opensearch or mongodb)', example: 'solr' });
const COLLECTION = ApiParam({ name: 'collection', description: 'Core, index or collection; without it, the connection\'s `collection`' });

const ACL = ApiQuery({
  name: 'acl',
  required: false,
  enum: ['true', 'false'],
  description:
    'Permission trimming. On a connection with `aclTrimming: true` every caller sees only documents whose `acl_read` holds their user name, ' +
    '`__everyone__` or one of their groups. `false`: an administrator sees all; for anyone else 403',
});

/** Every select parameter, documented once for both select routes. */
function SelectParameters(): MethodDecorator {
  const decorators = [
    ApiQuery({ name: 'q', required: true, description: 'The query, exactly once (gateway search language: field:value, "phrases", prefix*, [a TO b], AND/OR/NOT, +/-; bare terms search `content`; `*:*` is all)', example: 'title:report AND author:alice' }),
    ApiQuery({ name: 'fq', required: false, isArray: true, style: 'form', explode: true, description: 'Filter query, any number of times; each field it names must also be in facet.field', example: ['mime_type:application/pdf'] }),
    ApiQuery({ name: 'fl', required: false, description: 'Comma list of fields to return (id always comes back); default the connection\'s defaultFields, else all', example: 'id,title,size' }),
    ApiQuery({ name: 'facet', required: false, enum: ['true', 'false'], description: '`true` adds `facets` for the facet.field fields' }),
    ApiQuery({ name: 'facet.field', required: false, description: 'Comma list of fields to break down into values', example: 'mime_type,tags' }),
    ApiQuery({ name: 'facet.limit', required: false, description: 'Buckets per facet field (1-1000, default 100)' }),
    ApiQuery({ name: 'start', required: false, description: 'Offset of the first document (default 0)' }),
    ApiQuery({ name: 'rows', required: false, description: 'Page size (default 10, at most the connection\'s maxRows)' }),
    ApiQuery({ name: 'sort', required: false, description: 'Comma list of `field asc|desc` (not on text fields); default relevance; ties by id', example: 'created desc' }),
    ACL,
    // Read as the raw query string (@SearchParams): declared here so unknown names are refused before the connector is looked up.
    AcceptsQuery({ names: [...SELECT_PARAMETERS] }),
  ];
  return applyDecorators(...decorators);
}

const RAW_BODY = ApiBody({
  description:
    'The engine\'s own query. Elasticsearch: a _search body for that index. MongoDB: `{filter, projection, sort, skip, limit}` run as a find. ' +
    'Solr: a JSON request (or bare params) for that collection\'s /select. Refused (400 naming it): MongoDB $where/$function/$accumulator; ' +
    'Elasticsearch script, script_fields, runtime_mappings with scripts, stored scripts; Solr local params, qt, shards, stream.*, wt other than json. ' +
    'Results are capped at the connection\'s maxRows. On a connection with `aclTrimming: true` the query is trimmed as select is ' +
    '(Solr: an added fq; Elasticsearch: the query wrapped in a bool filter; MongoDB: `$and` with the filter), and what would answer past it is refused (400): ' +
    'Elasticsearch global, significant_terms/significant_text, suggest, knn, retriever, sub_searches, rank, join queries; ' +
    'Solr facet domains, terms, mlt, expand, json.*, explainOther, [subquery]/[child]; MongoDB $lookup, $unionWith, $graphLookup, $facet',
  schema: { type: 'object', additionalProperties: true, example: { query: { match: { content: 'report' } }, size: 5 } },
});

const RAW_RESULTS = { type: 'object' as const, additionalProperties: true, description: 'The engine\'s own result (MongoDB: the array of documents)' };

@RouteFamily('search/:connectorId', { tag: 'Content search', access: 'basic', errors: [400, 403, 404, 501, 502, 503, 504] })
@ApiExtraModels(FacetBucketDto)
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Get(':collection/select')
  @CONNECTOR
  @COLLECTION
  @SelectParameters()
  @Route({ summary: 'Select (collection in the path)', results: SelectResultsDto })
  selectIn(
    @Param('connectorId') connectorId: string,
    @Param('collection') collection: string,
    @SearchParams() params: URLSearchParams,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<SearchResults> {
    return this.search.select(connectorId, collection, params, user);
  }

  @Get('select')
  @CONNECTOR
  @SelectParameters()
  @Route({ summary: 'Select (the connection\'s collection)', results: SelectResultsDto })
  select(@Param('connectorId') connectorId: string, @SearchParams() params: URLSearchParams, @CurrentUser() user: AuthenticatedUser): Promise<SearchResults> {
    return this.search.select(connectorId, undefined, params, user);
  }

  @Post(':collection/query')
  @CONNECTOR
  @COLLECTION
  @RAW_BODY
  @ACL
  @Route({ summary: 'Raw query (collection in the path)', description: 'The engine\'s own answer inside the envelope', results: RAW_RESULTS })
  queryIn(
    @Param('connectorId') connectorId: string,
    @Param('collection') collection: string,
    @Body() body: unknown,
    @Query('acl') acl: string | undefined,
    @CurrentUser() user: AuthenticatedUser,
  ): Promise<unknown> {
    return this.search.query(connectorId, collection, body, acl, user);
  }

  @Post('query')
  @CONNECTOR
  @RAW_BODY
  @ACL
  @Route({ summary: 'Raw query (the connection\'s collection)', description: 'The engine\'s own answer inside the envelope', results: RAW_RESULTS })
  query(@Param('connectorId') connectorId: string, @Body() body: unknown, @Query('acl') acl: string | undefined, @CurrentUser() user: AuthenticatedUser): Promise<unknown> {
    return this.search.query(connectorId, undefined, body, acl, user);
  }
}
