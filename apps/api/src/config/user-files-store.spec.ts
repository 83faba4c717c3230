import { parseUserFilesStore } from './user-files-store';

const fail = (message: string) => new Error(message);
const s3Connector = { id: 'archive', typeId: 's3', description: '', params: { endpoint: 'http://127.0.0.1:9000', region: 'eu-west-3', bucket: 'docs', accessKeyId: 'k', secretAccessKey: 's' } };

describe('GATEWAY_USER_FILES_STORE', () => {
  it('is the local folder unless told otherwise', () => {
    expect(parseUserFilesStore({}, [], fail)).toEqual({ kind: 'local' });
    expect(parseUserFilesStore({ GATEWAY_USER_FILES_STORE: 'local' }, [], fail)).toEqual({ kind: 'local' });
  });

  it('takes bucket and prefix from the URL and the connection from its own variables', () => {
    const store = parseUserFilesStore(
      {
        GATEWAY_USER_FILES_STORE: 's3://exports/gateway/user-files/',
        GATEWAY_USER_FILES_S3_ENDPOINT: 'http://127.0.0.1:9000',
        GATEWAY_USER_FILES_S3_ACCESS_KEY_ID: 'key',
        GATEWAY_USER_FILES_S3_SECRET_ACCESS_KEY: 'secret',
        GATEWAY_USER_FILES_S3_PART_BYTES: String(16 * 1024 * 1024),
      },
      [],
      fail,
    );
    expect(store).toMatchObject({
      kind: 's3',
      bucket: 'exports',
      prefix: 'gateway/user-files/',
      partBytes: 16 * 1024 * 1024,
      partConcurrency: 4,
      connection: { endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', accessKeyId: 'key', secretAccessKey: 'secret', forcePathStyle: true },
    });
  });

  it('borrows the connection of a configured s3 connector, but not its bucket', () => {
    const store = parseUserFilesStore({ GATEWAY_USER_FILES_STORE: 's3://exports', GATEWAY_USER_FILES_S3_CONNECTOR: 'archive' }, [s3Connector], fail);
    expect(store).toMatchObject({ kind: 's3', bucket: 'exports', prefix: '', connectorId: 'archive', connection: { region: 'eu-west-3', accessKeyId: 'k' } });
  });

  it.each([
    [{ GATEWAY_USER_FILES_STORE: 'ftp://x' }, /GATEWAY_USER_FILES_STORE: must be 'local' or s3:\/\/bucket\/prefix/],
    [{ GATEWAY_USER_FILES_STORE: 's3://Bad_Bucket' }, /GATEWAY_USER_FILES_STORE: .*bucket name/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1/a/../c' }, /GATEWAY_USER_FILES_STORE: .*prefix/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_CONNECTOR: 'nope' }, /no connector 'nope'/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_CONNECTOR: 'fs' }, /of type 'filesystem', not 's3'/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_CONNECTOR: 'archive', GATEWAY_USER_FILES_S3_REGION: 'x' }, /either it or GATEWAY_USER_FILES_S3_REGION/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_ACCESS_KEY_ID: 'k' }, /accessKeyId and secretAccessKey go together/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_ENDPOINT: 'ftp://x' }, /GATEWAY_USER_FILES_S3_\*.*http/],
    [{ GATEWAY_USER_FILES_STORE: 's3://b-1', GATEWAY_USER_FILES_S3_PART_BYTES: '1024' }, /GATEWAY_USER_FILES_S3_PART_BYTES: must be an integer between 5242880/],
  ])('refuses %j, naming the variable', (env, message) => {
    const connectors = [s3Connector, { id: 'fs', typeId: 'filesystem', description: '', params: {} }];
    expect(() => parseUserFilesStore(env, connectors, fail)).toThrow(message);
  });
});
