import { InvalidArgumentError } from '@gateway/connector-api';
import { parseParams } from './params';

const base = { tenantId: 't', clientId: 'c', clientSecret: 's', driveId: 'b!drive' };

function errorOf(params: Record<string, unknown>): InvalidArgumentError {
  try {
    parseParams(params);
  } catch (e) {
    return e as InvalidArgumentError;
  }
  throw new Error('no error');
}

describe('graph connector params', () => {
  it('defaults to the public Graph and documented sizes', () => {
    expect(parseParams(base)).toMatchObject({ graphUrl: 'https://graph.microsoft.com/v1.0', chunkThresholdBytes: 4 * 1024 * 1024, fragmentBytes: 32 * 327_680, maxRetries: 4, pageSize: 200 });
  });

  it('says, without a credential, that the certificate thumbprint is optional (as the README does)', () => {
    expect(errorOf({ ...base, clientSecret: undefined }).message).toMatch(/certificatePath \(its thumbprint, certificateThumbprint, is optional/);
  });

  it.each([
    [{ ...base, clientSecret: undefined }, 'clientSecret'],
    [{ ...base, certificatePath: '/etc/hostname' }, 'certificatePath'],
    [{ ...base, driveId: undefined }, 'driveId'],
    [{ ...base, graphUrl: 'http://graph.example/v1.0' }, 'graphUrl'],
    [{ ...base, fragmentBytes: 327_681 }, 'fragmentBytes'],
    [{ ...base, fragmentBytes: 100 }, 'fragmentBytes'],
    [{ ...base, caFile: '/no/such/ca.pem' }, 'caFile'],
    [{ ...base, maxRetries: -1 }, 'maxRetries'],
    [{ ...base, tenantId: '' }, 'tenantId'],
  ])('refuses %j naming the parameter', (params, parameter) => {
    const error = errorOf(params);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error.parameter).toBe(parameter);
  });

  it('takes a library of a site instead of a drive id', () => {
    expect(parseParams({ ...base, driveId: undefined, siteId: 'host,a,b', library: 'Documents' })).toMatchObject({ siteId: 'host,a,b', library: 'Documents', driveId: undefined });
  });
});
