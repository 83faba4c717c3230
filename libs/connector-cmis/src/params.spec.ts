import { InvalidArgumentError } from '@gateway/connector-api';
import { CmisConnector } from './cmis.connector';
import { DEFAULTS, parseParams } from './params';

const valid = { url: 'http://127.0.0.1:8080/cmis/browser/', repositoryId: 'A1', user: 'admin', password: 's3cret' };

function parameterOf(params: Record<string, unknown>): string | undefined {
  try {
    parseParams(params);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as InvalidArgumentError).parameter;
  }
}

describe('CMIS connector params', () => {
  it('applies the defaults and drops the trailing slash of the url', () => {
    expect(parseParams(valid)).toEqual({ ...valid, url: 'http://127.0.0.1:8080/cmis/browser', ...DEFAULTS });
  });

  it.each([
    [{ ...valid, url: undefined }, 'url'],
    [{ ...valid, url: 'not a url' }, 'url'],
    [{ ...valid, url: 'ftp://host/cmis' }, 'url'],
    [{ ...valid, url: 'http://u:p@host/cmis/browser' }, 'url'],
    [{ ...valid, repositoryId: '' }, 'repositoryId'],
    [{ ...valid, user: 42 }, 'user'],
    [{ ...valid, password: undefined }, 'password'],
    [{ ...valid, timeoutMs: 0 }, 'timeoutMs'],
    [{ ...valid, pageSize: 'many' }, 'pageSize'],
    [{ ...valid, pageSize: 10_001 }, 'pageSize'],
    [{ ...valid, userMapping: 'impersonate' }, 'userMapping'],
    [{ ...valid, documentType: ' ' }, 'documentType'],
    [{ ...valid, pasword: 'typo' }, 'pasword'],
  ])('refuses %j naming %s', (params, parameter) => {
    expect(parameterOf(params)).toBe(parameter);
  });

  it('accepts numbers given as strings (values substituted from the environment)', () => {
    expect(parseParams({ ...valid, timeoutMs: '5000', pageSize: '50' })).toMatchObject({ timeoutMs: 5000, pageSize: 50 });
  });

  it('never shows the password among the public params', () => {
    const connector = new CmisConnector({ id: 'c', typeId: 'cmis', description: '', params: valid }, parseParams(valid));
    expect(connector.publicParams).not.toHaveProperty('password');
    expect(JSON.stringify(connector.publicParams)).not.toContain('s3cret');
    expect(connector.publicParams).toMatchObject({ url: 'http://127.0.0.1:8080/cmis/browser', repositoryId: 'A1', user: 'admin' });
  });

  it('reports every capability group before the first contact, so no call is refused for want of knowledge', () => {
    const connector = new CmisConnector({ id: 'c', typeId: 'cmis', description: '', params: valid }, parseParams(valid));
    expect(connector.acls && connector.checkInOut && connector.contentUpdate && connector.versioning && connector.folders).toBeTruthy();
    expect(connector.folders.deleteFolder).toBeUndefined();
  });
});
