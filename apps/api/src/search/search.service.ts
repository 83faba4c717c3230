import { Injectable, OnModuleInit } from '@nestjs/common';
import {
  COLLECTION_NAME,
  InvalidArgumentError,
  PermissionDeniedError,
  UpstreamError,
  type SearchConnector,
  type SearchResults,
} from '@gateway/connector-api';
import {
  aclPrincipals,
  DEFAULT_FIELD_SCHEMA,
  InvalidQueryNodeError,
  SearchSyntaxError,
  fieldsOf,
  isValidFieldName,
  parseQuery,
  parseSort,
  type QueryNode,
  type SearchRequest,
} from '@gateway/search-query';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { ConfigError } from '../config/gateway-config';
import { ConnectorRegistry } from '../connectors/connector-registry.service';

/** Select parameters this service reads; anything else is refused so a typo is not silently ignored. */
/** The select routes' query names (the guard refuses the others with the same message as the service). */
export const SELECT_PARAMETERS = new Set(['q', 'fq', 'fl', 'facet', 'facet.field', 'facet.limit', 'start', 'rows', 'sort', 'acl']);
const DEFAULT_ROWS = 10;
const DEFAULT_FACET_LIMIT = 100;
const MAX_FACET_LIMIT = 1000;
const MAX_START = 1_000_000;

/**
 * Spec 4.6 over the search group of a connector: validates select
 * parameters into one engine-neutral SearchRequest (the gateway language,
 * libs/search-query), and hands raw queries to the connector, whose guard
 * refuses engine constructs before anything leaves.
 */
@Injectable()
export class SearchService implements OnModuleInit {
  /** Each search connection's defaultFilters, parsed once at start-up. */
  private readonly defaultFilters = new Map<string, QueryNode[]>();

  constructor(private readonly registry: ConnectorRegistry) {}

  onModuleInit(): void {
    for (const connector of this.registry.list()) {
      if (!connector.search) continue;
      const filters = connector.search.settings.defaultFilters.map((text, i) => {
        try {
          return parseQuery(text, 'fq', DEFAULT_FIELD_SCHEMA);
        } catch (e) {
          if (e instanceof SearchSyntaxError) {
            throw new ConfigError(`connector '${connector.id}': params.defaultFilters[${i}]: ${e.reason} at position ${e.position}`);
          }
          throw e;
        }
      });
      this.defaultFilters.set(connector.id, filters);
    }
  }

  async select(connectorId: string, collectionInPath: string | undefined, params: URLSearchParams, user: AuthenticatedUser): Promise<SearchResults> {
    const connector = this.registry.searchConnector(connectorId);
    const collection = this.collection(connector, collectionInPath);
    const request = this.selectRequest(connector, params);
    const principals = this.trimming(connector, params.get('acl'), user);
    try {
      return await connector.search.select(collection, request, principals);
    } catch (e) {
      // The parser already checks fields against the schema; this is the translators' own safety net.
      if (e instanceof InvalidQueryNodeError) throw new InvalidArgumentError('q', e.message);
      throw e;
    }
  }

  async query(connectorId: string, collectionInPath: string | undefined, body: unknown, acl: string | undefined, user: AuthenticatedUser): Promise<unknown> {
    const connector = this.registry.searchConnector(connectorId);
    const collection = this.collection(connector, collectionInPath);
    const principals = this.trimming(connector, acl ?? null, user);
    try {
      return await connector.search.rawQuery(collection, body, principals);
    } catch (e) {
      throw refusedByEngine(e) ?? e;
    }
  }

  /**
   * The principals to trim to, or undefined for none: a connection with aclTrimming trims every caller
   * unless an admin says `acl=false`. `acl=false` from anyone else is 403 (also where nothing is
   * trimmed, so a client cannot learn which connections trim by trying); `acl=true` is the default said aloud.
   */
  private trimming(connector: SearchConnector, acl: string | null, user: AuthenticatedUser): string[] | undefined {
    if (acl !== null && acl !== 'true' && acl !== 'false') throw new InvalidArgumentError('acl', "acl must be 'true' or 'false'");
    if (acl === 'false') {
      if (!user.roles.includes('admin')) throw new PermissionDeniedError('acl=false (search without permission trimming) is for administrators only', { parameter: 'acl' });
      return undefined;
    }
    return connector.search.settings.aclTrimming ? aclPrincipals(user.username, user.groups) : undefined;
  }

  /** From the path, else the connection's `collection`, else 400 naming `collection`. */
  private collection(connector: SearchConnector, inPath: string | undefined): string {
    const collection = inPath ?? connector.search.settings.collection;
    if (collection === undefined) {
      throw new InvalidArgumentError('collection', `No collection in the path and connection '${connector.id}' has no default collection`);
    }
    if (!COLLECTION_NAME.test(collection) || collection.startsWith('system.')) {
      throw new InvalidArgumentError('collection', `Invalid collection name '${collection}': letters, digits, . _ - (not starting with . or _)`);
    }
    return collection;
  }

  private selectRequest(connector: SearchConnector, params: URLSearchParams): SearchRequest {
    for (const name of new Set(params.keys())) {
      if (!SELECT_PARAMETERS.has(name)) {
        throw new InvalidArgumentError(name, `Unknown parameter '${name}' (known: ${[...SELECT_PARAMETERS].join(', ')})`);
      }
    }
    for (const name of SELECT_PARAMETERS) {
      if (name !== 'fq' && params.getAll(name).length > 1) throw new InvalidArgumentError(name, `Parameter '${name}' must be given once`);
    }
    const qs = params.getAll('q');
    if (qs.length !== 1) throw new InvalidArgumentError('q', 'Exactly one q is required');
    const settings = connector.search.settings;
    const schema = DEFAULT_FIELD_SCHEMA;

    const facetFields = fieldList(params.get('facet.field'), 'facet.field');
    const facet = params.get('facet');
    if (facet !== null && facet !== 'true' && facet !== 'false') throw new InvalidArgumentError('facet', "facet must be 'true' or 'false'");

    const query = syntax(() => parseQuery(qs[0], 'q', schema));
    const filters = params.getAll('fq').map((text) => {
      const node = syntax(() => parseQuery(text, 'fq', schema));
      for (const field of fieldsOf(node)) {
        if (!facetFields?.includes(field)) {
          throw new InvalidArgumentError('fq', `fq field '${field}' must also be in facet.field`);
        }
      }
      return node;
    });

    const rows = integer(params.get('rows'), 'rows', DEFAULT_ROWS, 0, settings.maxRows);
    const requested = fieldList(params.get('fl'), 'fl') ?? settings.defaultFields;
    // The id is always answered, whatever fl says.
    const fields = requested && !requested.includes('id') ? ['id', ...requested] : requested;
    return {
      query,
      filters: [...(this.defaultFilters.get(connector.id) ?? []), ...filters],
      fields,
      facetFields: facet === 'true' ? facetFields : undefined,
      facetLimit: integer(params.get('facet.limit'), 'facet.limit', DEFAULT_FACET_LIMIT, 1, MAX_FACET_LIMIT),
      start: integer(params.get('start'), 'start', 0, 0, MAX_START),
      rows,
      sort: syntax(() => parseSort(params.get('sort') ?? '', schema)),
      schema,
    };
  }
}

/** A syntax error as 400 naming the parameter and the position. */
function syntax<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (e instanceof SearchSyntaxError) throw new InvalidQueryError(e);
    throw e;
  }
}

/** 400 naming the parameter, with the 0-based `position` of the fault in its value. */
class InvalidQueryError extends InvalidArgumentError {
  constructor(error: SearchSyntaxError) {
    super(error.parameter, `Invalid ${error.parameter}: ${error.reason} at position ${error.position}`, 'INVALID_QUERY');
    this.details.position = error.position;
  }
}

function fieldList(value: string | null, parameter: string): string[] | undefined {
  if (value === null) return undefined;
  const fields = value.split(',').map((f) => f.trim());
  for (const field of fields) {
    if (!isValidFieldName(field) || /^_.*_$/.test(field)) throw new InvalidArgumentError(parameter, `Invalid field name '${field}' in ${parameter}`);
  }
  return [...new Set(fields)];
}

function integer(value: string | null, parameter: string, fallback: number, min: number, max: number): number {
  if (value === null) return fallback;
  const n = /^\d{1,9}$/.test(value.trim()) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new InvalidArgumentError(parameter, `${parameter} must be an integer from ${min} to ${max}`);
  return n;
}

/** MongoDB's codes for a query it cannot read: BadValue (an unknown operator, a wrong operand) and FailedToParse. */
const MONGO_QUERY_REFUSED = new Set([2, 9]);

/**
 * A raw query the engine refused as malformed (HTTP 400 from Solr, Elasticsearch, OpenSearch; BadValue or
 * FailedToParse from MongoDB) is the client's body at fault, not the engine: 400 naming `body`, with the
 * engine's reason, instead of 502. Select requests never get here with such an error: the gateway writes
 * their engine syntax itself, so an engine refusing it stays a 502.
 */
function refusedByEngine(e: unknown): InvalidArgumentError | undefined {
  if (!(e instanceof UpstreamError)) return undefined;
  const { engineStatus, engineCode } = e.details;
  if (engineStatus !== 400 && !(typeof engineCode === 'number' && MONGO_QUERY_REFUSED.has(engineCode))) return undefined;
  return new InvalidArgumentError('body', `The engine refused the raw query: ${e.message}`, 'ENGINE_REFUSED_QUERY');
}
