import { InvalidArgumentError, PermissionDeniedError, UpstreamError, UpstreamUnavailableError, type SearchConnector, type SearchResults } from '@gateway/connector-api';
import type { SearchRequest } from '@gateway/search-query';
import type { ConnectorRegistry } from '../connectors/connector-registry.service';
import type { AuthenticatedUser } from '../auth/auth.decorators';
import { SearchService } from './search.service';

/** A search connector that records what the service hands it (the engines are tested in the e2e contract). */
function recordingConnector(settings: Partial<SearchConnector['search']['settings']> = {}) {
  const seen: { collection: string; request: SearchRequest; principals?: readonly string[] }[] = [];
  const connector: SearchConnector = {
    id: 'rec',
    typeId: 'recording',
    description: '',
    publicParams: {},
    checkHealth: async () => undefined,
    search: {
      settings: { defaultFilters: [], timeoutMs: 1000, maxRows: 100, ...settings },
      select: async (collection, request, principals): Promise<SearchResults> => {
        seen.push({ collection, request, principals });
        return { numFound: 0, start: request.start, rows: request.rows, docs: [] };
      },
      rawQuery: async (collection, body, principals) => {
        seen.push({ collection, request: body as SearchRequest, principals });
        return {};
      },
    },
  };
  const registry = { searchConnector: () => connector, list: () => [connector] } as unknown as ConnectorRegistry;
  const service = new SearchService(registry);
  service.onModuleInit();
  return { service, seen };
}

const params = (query: string) => new URLSearchParams(query);
const USER: AuthenticatedUser = { username: 'alice', roles: ['user'], groups: ['finance'] };
const ADMIN: AuthenticatedUser = { username: 'root', roles: ['admin', 'user'] };

describe('SearchService select parameters', () => {
  it('builds one request: defaults, default filters first, id always in fl', async () => {
    const { service, seen } = recordingConnector({ collection: 'main', defaultFilters: ['author:alice'] });
    await service.select('rec', undefined, params('q=title:report&fl=title&facet=true&facet.field=tags&fq=tags:x&sort=size desc'), USER);
    const { collection, request } = seen[0];
    expect(collection).toBe('main');
    expect(request).toMatchObject({ start: 0, rows: 10, facetFields: ['tags'], fields: ['id', 'title'], sort: [{ field: 'size', direction: 'desc' }] });
    expect(request.filters).toHaveLength(2);
    expect(request.filters[0]).toEqual({ kind: 'term', field: 'author', value: 'alice' });
  });

  it.each([
    ['', 'q'],
    ['q=a&q=b', 'q'],
    ['q=title:(', 'q'],
    ['q=*:*&fq=author:x', 'fq'],
    ['q=*:*&facet.field=tags&fq=author:x', 'fq'],
    ['q=*:*&rows=101', 'rows'],
    ['q=*:*&start=-1', 'start'],
    ['q=*:*&sort=title asc', 'sort'],
    ['q=*:*&fl=$where', 'fl'],
    ['q=*:*&facet=yes', 'facet'],
    ['q=*:*&qt=/update', 'qt'],
    ['q=*:*&rows=1&rows=2', 'rows'],
  ])('refuses %s naming %s', async (query, parameter) => {
    const { service } = recordingConnector({ collection: 'main' });
    await expect(service.select('rec', undefined, params(query), USER)).rejects.toMatchObject({ parameter });
  });

  it('names the position of a syntax error', async () => {
    const { service } = recordingConnector({ collection: 'main' });
    const error = await service.select('rec', undefined, params('q=title:report AND ('), USER).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).details).toMatchObject({ parameter: 'q', position: expect.any(Number) });
  });

  it('needs a collection from the path or the connection, and a plain name', async () => {
    const { service } = recordingConnector();
    await expect(service.select('rec', undefined, params('q=*:*'), USER)).rejects.toMatchObject({ parameter: 'collection' });
    for (const bad of ['_all', 'a,b', 'logs-*', 'system.users', '.hidden']) {
      await expect(service.select('rec', bad, params('q=*:*'), USER)).rejects.toMatchObject({ parameter: 'collection' });
    }
  });
});

describe('SearchService permission trimming', () => {
  it('trims every caller of a trimming connection to their name, __everyone__ and their groups', async () => {
    const { service, seen } = recordingConnector({ collection: 'main', aclTrimming: true });
    await service.select('rec', undefined, params('q=*:*'), USER);
    await service.select('rec', undefined, params('q=*:*&acl=true'), USER);
    await service.query('rec', undefined, { query: 'x' }, undefined, USER);
    await service.select('rec', undefined, params('q=*:*'), ADMIN);
    expect(seen.map((s) => s.principals)).toEqual([
      ['alice', '__everyone__', 'finance'],
      ['alice', '__everyone__', 'finance'],
      ['alice', '__everyone__', 'finance'],
      ['root', '__everyone__'],
    ]);
  });

  it('does not trim a connection without aclTrimming', async () => {
    const { service, seen } = recordingConnector({ collection: 'main' });
    await service.select('rec', undefined, params('q=*:*'), USER);
    await service.query('rec', undefined, {}, undefined, USER);
    expect(seen.map((s) => s.principals)).toEqual([undefined, undefined]);
  });

  it('lets an admin see all with acl=false, on select and raw query', async () => {
    const { service, seen } = recordingConnector({ collection: 'main', aclTrimming: true });
    await service.select('rec', undefined, params('q=*:*&acl=false'), ADMIN);
    await service.query('rec', undefined, {}, 'false', ADMIN);
    expect(seen.map((s) => s.principals)).toEqual([undefined, undefined]);
  });

  it('refuses acl=false to a non-admin with 403, whether the connection trims or not, and acl other than true/false with 400', async () => {
    for (const aclTrimming of [true, false]) {
      const { service, seen } = recordingConnector({ collection: 'main', aclTrimming });
      await expect(service.select('rec', undefined, params('q=*:*&acl=false'), USER)).rejects.toBeInstanceOf(PermissionDeniedError);
      await expect(service.query('rec', undefined, {}, 'false', USER)).rejects.toBeInstanceOf(PermissionDeniedError);
      expect(seen).toEqual([]);
    }
    const { service } = recordingConnector({ collection: 'main', aclTrimming: true });
    await expect(service.select('rec', undefined, params('q=*:*&acl=no'), ADMIN)).rejects.toMatchObject({ parameter: 'acl' });
    await expect(service.query('rec', undefined, {}, 'FALSE', ADMIN)).rejects.toMatchObject({ parameter: 'acl' });
    await expect(service.select('rec', undefined, params('q=*:*&acl=false&acl=false'), ADMIN)).rejects.toMatchObject({ parameter: 'acl' });
  });
});

describe('SearchService raw query refused by the engine', () => {
  function failingWith(error: Error) {
    const { service } = recordingConnector({ collection: 'main' });
    const registry = (service as unknown as { registry: ConnectorRegistry }).registry;
    registry.searchConnector('rec').search.rawQuery = () => Promise.reject(error);
    return service;
  }

  it.each([
    ['an HTTP engine answering 400', new UpstreamError('OpenSearch: parsing_exception: Unknown key', { engineStatus: 400 })],
    ['MongoDB BadValue', new UpstreamError('MongoDB: unknown operator: $nosuchoperator', { engineCode: 2 })],
    ['MongoDB FailedToParse', new UpstreamError('MongoDB: bad', { engineCode: 9 })],
  ])('is 400 ENGINE_REFUSED_QUERY naming body, with the engine reason: %s', async (_case, error) => {
    const refused = failingWith(error).query('rec', undefined, {}, undefined, USER);
    await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(refused).rejects.toMatchObject({ parameter: 'body', code: 'ENGINE_REFUSED_QUERY', message: `The engine refused the raw query: ${error.message}` });
  });

  it.each([
    ['an engine failing (500)', new UpstreamError('Solr: boom', { engineStatus: 500 })],
    ['another MongoDB code', new UpstreamError('MongoDB: not primary', { engineCode: 10107 })],
    ['no engine status', new UpstreamError('Elasticsearch client: x')],
    ['an unavailable engine', new UpstreamUnavailableError('Solr cannot be reached')],
  ])('stays what it was: %s', async (_case, error) => {
    await expect(failingWith(error).query('rec', undefined, {}, undefined, USER)).rejects.toBe(error);
  });
});
