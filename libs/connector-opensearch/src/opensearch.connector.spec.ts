import { InvalidArgumentError } from '@gateway/connector-api';
import { OpenSearchConnectorType } from './opensearch.connector-type';
import { parseOpenSearchParams } from './params';

describe('opensearch connector params', () => {
  it('takes url, collection, user and password', () => {
    const params = parseOpenSearchParams({ url: 'https://os:9200', collection: 'docs', user: 'u', password: 'p', timeoutMs: '2500' });
    expect(params).toMatchObject({ url: 'https://os:9200', user: 'u', password: 'p', settings: { collection: 'docs', timeoutMs: 2500, maxRows: 1000 } });
  });

  it('takes a caFile for an https url', () => {
    expect(parseOpenSearchParams({ url: 'https://os:9200', caFile: __filename }).caFile).toBe(__filename);
  });

  it.each([
    [{ url: 'http://os', password: 'p' }, 'user'],
    [{ url: 'http://os', user: 'u' }, 'password'],
    [{ url: 'http://os', apiKey: 'k' }, 'apiKey'],
    [{ url: 'http://os', caFile: __filename }, 'caFile'],
    [{ url: 'https://os', caFile: '/no/such/ca.pem' }, 'caFile'],
    [{ url: 'ftp://os' }, 'url'],
    [{ url: 'http://os', collection: '_all' }, 'collection'],
    [{ url: 'http://os', collection: 'a,b' }, 'collection'],
    [{ url: 'http://os', collection: 'logs-*' }, 'collection'],
  ])('refuses %j naming %s', (params, parameter) => {
    expect(() => parseOpenSearchParams(params)).toThrow(expect.objectContaining({ parameter }) as InvalidArgumentError);
  });

  it('never shows the password', async () => {
    const connector = await new OpenSearchConnectorType().create(
      { id: 'o', typeId: 'opensearch', description: '', params: { url: 'http://127.0.0.1:1', user: 'u', password: 'secret-pass' } },
      { dataDir: '/tmp' },
    );
    expect(JSON.stringify(connector.publicParams)).not.toContain('secret-pass');
    expect(connector.publicParams).toMatchObject({ url: 'http://127.0.0.1:1', user: 'u' });
    await connector.close?.();
  });
});
