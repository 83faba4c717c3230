import { InvalidArgumentError } from '@gateway/connector-api';
import { parseSolrParams } from './params';
import { SolrConnectorType } from './solr.connector-type';

describe('solr connector params', () => {
  it('takes the documented keys with their defaults', () => {
    expect(parseSolrParams({ url: 'http://127.0.0.1:8983/solr/', collection: 'docs' })).toEqual({
      url: 'http://127.0.0.1:8983/solr',
      user: undefined,
      password: undefined,
      configSet: '_default',
      settings: { collection: 'docs', defaultFilters: [], defaultFields: undefined, timeoutMs: 10_000, maxRows: 1000, aclTrimming: false },
    });
    expect(parseSolrParams({ url: 'http://h/solr', aclTrimming: true }).settings.aclTrimming).toBe(true);
  });

  it.each([
    [{ url: 'http://h/solr', core: 'x' }, 'core'],
    [{ url: 'ftp://h/solr' }, 'url'],
    [{ url: 'http://u:p@h/solr' }, 'url'],
    [{ url: 'http://h/solr', collection: '../admin' }, 'collection'],
    [{ url: 'http://h/solr', password: 'p' }, 'user'],
    [{ url: 'http://h/solr', maxRows: 0 }, 'maxRows'],
    [{ url: 'http://h/solr', defaultFilters: 'a:b' }, 'defaultFilters'],
    [{ url: 'http://h/solr', configSet: '../conf' }, 'configSet'],
    [{ url: 'http://h/solr', configSet: 'a/b' }, 'configSet'],
    [{ url: 'http://h/solr', aclTrimming: 'yes' }, 'aclTrimming'],
    [{ url: 'http://h/solr', aclTrimming: 1 }, 'aclTrimming'],
  ])('refuses %j naming %s', (params, parameter) => {
    expect(() => parseSolrParams(params)).toThrow(expect.objectContaining({ parameter }) as InvalidArgumentError);
  });

  it('never shows the password', async () => {
    const connector = await new SolrConnectorType().create(
      { id: 's', typeId: 'solr', description: '', params: { url: 'http://127.0.0.1:1/solr', user: 'u', password: 'secret-pass' } },
      { dataDir: '/tmp' },
    );
    expect(JSON.stringify(connector.publicParams)).not.toContain('secret-pass');
    expect(connector.publicParams.user).toBe('u');
    await connector.close?.();
  });
});
