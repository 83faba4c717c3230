import { InvalidArgumentError } from '@gateway/connector-api';
import { ElasticsearchConnectorType } from './elasticsearch.connector-type';
import { parseElasticsearchParams } from './params';

describe('elasticsearch connector params', () => {
  it('takes url, collection and apiKey', () => {
    const params = parseElasticsearchParams({ url: 'https://es:9200', collection: 'docs', apiKey: 'k', timeoutMs: '2500' });
    expect(params).toMatchObject({ url: 'https://es:9200', apiKey: 'k', settings: { collection: 'docs', timeoutMs: 2500, maxRows: 1000 } });
  });

  it.each([
    [{ url: 'http://es', apiKey: 'k', user: 'u' }, 'apiKey'],
    [{ url: 'http://es', index: 'x' }, 'index'],
    [{ url: 'http://es', collection: '_all' }, 'collection'],
    [{ url: 'http://es', collection: 'a,b' }, 'collection'],
    [{ url: 'http://es', collection: 'logs-*' }, 'collection'],
  ])('refuses %j naming %s', (params, parameter) => {
    expect(() => parseElasticsearchParams(params)).toThrow(expect.objectContaining({ parameter }) as InvalidArgumentError);
  });

  it('never shows the password or the API key', async () => {
    for (const params of [{ url: 'http://127.0.0.1:1', user: 'u', password: 'secret-pass' }, { url: 'http://127.0.0.1:1', apiKey: 'secret-pass' }]) {
      const connector = await new ElasticsearchConnectorType().create({ id: 'e', typeId: 'elasticsearch', description: '', params }, { dataDir: '/tmp' });
      expect(JSON.stringify(connector.publicParams)).not.toContain('secret-pass');
      await connector.close?.();
    }
  });
});
