import { InvalidArgumentError } from '@gateway/connector-api';
import { MongoConnectorType } from './mongodb.connector-type';
import { parseMongoParams, redactUri } from './params';

describe('mongodb connector params', () => {
  it('takes uri, database and collection', () => {
    expect(parseMongoParams({ uri: 'mongodb://h:27017/', database: 'db', collection: 'docs', maxRows: 50 })).toMatchObject({
      uri: 'mongodb://h:27017/',
      database: 'db',
      settings: { collection: 'docs', maxRows: 50, timeoutMs: 10_000 },
    });
  });

  it.each([
    [{ uri: 'http://h', database: 'db' }, 'uri'],
    [{ uri: 'mongodb://h' }, 'database'],
    [{ uri: 'mongodb://h', database: 'a.b' }, 'database'],
    [{ uri: 'mongodb://h', database: 'db', url: 'x' }, 'url'],
  ])('refuses %j naming %s', (params, parameter) => {
    expect(() => parseMongoParams(params)).toThrow(expect.objectContaining({ parameter }) as InvalidArgumentError);
  });

  it('shows the uri without its password', async () => {
    expect(redactUri('mongodb://reader:s3cret@h1:27017,h2/db?authSource=admin')).toBe('mongodb://reader:***@h1:27017,h2/db?authSource=admin');
    expect(redactUri('mongodb+srv://h/db?password=s3cret&x=1')).toBe('mongodb+srv://h/db?password=***&x=1');
    const connector = await new MongoConnectorType().create(
      { id: 'm', typeId: 'mongodb', description: '', params: { uri: 'mongodb://reader:s3cret@127.0.0.1:1/', database: 'db' } },
      { dataDir: '/tmp' },
    );
    expect(JSON.stringify(connector.publicParams)).not.toContain('s3cret');
    await connector.close?.();
  });
});
