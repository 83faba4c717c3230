import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  NotSupportedError,
  PermissionDeniedError,
  UpstreamError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from '@gateway/connector-api';
import { CmisTimeout, mapCmisFailure, mapTransportError } from './cmis-errors';

describe('CMIS exceptions as typed errors', () => {
  it.each([
    ['objectNotFound', NotFoundError],
    ['updateConflict', ConflictError],
    ['versioning', ConflictError],
    ['contentAlreadyExists', ConflictError],
    ['nameConstraintViolation', ConflictError],
    ['permissionDenied', PermissionDeniedError],
    ['notSupported', NotSupportedError],
    ['constraint', UpstreamError],
    ['runtime', UpstreamError],
    ['storage', UpstreamError],
  ])('%s becomes %p', (exception, type) => {
    expect(mapCmisFailure({ status: 400, exception, message: 'the server says why' }, { id: '42', capability: 'checkOut' })).toBeInstanceOf(type);
  });

  it('names the item that was not found', () => {
    expect(mapCmisFailure({ status: 404, exception: 'objectNotFound', message: 'Unknown object id: 42' }, { id: '42' })).toMatchObject({ code: 'ITEM_NOT_FOUND', details: { resource: 'item', id: '42' } });
  });

  it("passes the server's message on for conflicts and failures", () => {
    expect(mapCmisFailure({ status: 409, exception: 'nameConstraintViolation', message: 'x.txt exists' }).message).toBe('x.txt exists');
    expect(mapCmisFailure({ status: 409, exception: 'nameConstraintViolation' }).code).toBe('ALREADY_EXISTS');
    expect(mapCmisFailure({ status: 500, exception: 'runtime', message: 'boom' }).message).toContain('boom');
  });

  it('blames invalidArgument on the parameter when the call has one, else on the server', () => {
    const blamed = mapCmisFailure({ status: 400, exception: 'invalidArgument', message: 'not a folder' }, { parameter: 'folderId' });
    expect(blamed).toBeInstanceOf(InvalidArgumentError);
    expect((blamed as InvalidArgumentError).parameter).toBe('folderId');
    expect(mapCmisFailure({ status: 400, exception: 'invalidArgument', message: 'bad' })).toBeInstanceOf(UpstreamError);
  });

  it('names the capability of notSupported', () => {
    expect(mapCmisFailure({ status: 405, exception: 'notSupported' }, { capability: 'checkIn' })).toMatchObject({ details: { capability: 'checkIn', connectorType: 'cmis' } });
  });

  it('goes by the HTTP status when the body is not CMIS JSON', () => {
    expect(mapCmisFailure({ status: 401 }, { user: 'alice' })).toBeInstanceOf(PermissionDeniedError);
    expect(mapCmisFailure({ status: 404 }, { id: '1' })).toBeInstanceOf(NotFoundError);
    expect(mapCmisFailure({ status: 503 })).toBeInstanceOf(UpstreamUnavailableError);
    expect(mapCmisFailure({ status: 500, message: 'Internal' })).toBeInstanceOf(UpstreamError);
  });

  it('maps refused connections to unavailable and our idle timeout to timeout', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    expect(mapTransportError(refused, 'http://x')).toMatchObject({ kind: 'upstream_unavailable', details: { reason: 'ECONNREFUSED' } });
    expect(mapTransportError(new CmisTimeout(250), 'http://x')).toBeInstanceOf(UpstreamTimeoutError);
    expect(mapTransportError(Object.assign(new Error('aborted'), { cause: new CmisTimeout(250) }), 'http://x')).toMatchObject({ details: { timeoutMs: 250 } });
  });
});
