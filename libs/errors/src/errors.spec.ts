import { GatewayError, NotFoundError, PayloadTooLargeError, RangeNotSatisfiableError, UnsupportedMediaTypeError, UpstreamError, UpstreamTimeoutError } from './errors';
import { refusedParameter, serverSaid, upstreamNotFound } from './upstream-answers';

describe('typed errors', () => {
  it('keep their own class, name, kind and code when they share a constructor', () => {
    const cause = new Error('socket hang up');
    const e = new UpstreamError('The repository failed', { status: 500 }, cause);
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toBeInstanceOf(GatewayError);
    expect(e).not.toBeInstanceOf(UpstreamTimeoutError);
    expect({ name: e.name, kind: e.kind, code: e.code, message: e.message, details: e.details, cause: e.cause }).toEqual({
      name: 'UpstreamError',
      kind: 'upstream_error',
      code: 'UPSTREAM_ERROR',
      message: 'The repository failed',
      details: { status: 500 },
      cause,
    });
    const big = new PayloadTooLargeError('Too big');
    expect(big).not.toBeInstanceOf(UnsupportedMediaTypeError);
    expect({ name: big.name, kind: big.kind, code: big.code, details: big.details, cause: big.cause }).toEqual({
      name: 'PayloadTooLargeError',
      kind: 'payload_too_large',
      code: 'PAYLOAD_TOO_LARGE',
      details: {},
      cause: undefined,
    });
  });

  it('name what was not found, and the size a range must fit', () => {
    expect(new NotFoundError('item', 'x1')).toMatchObject({ code: 'ITEM_NOT_FOUND', message: "Item 'x1' not found", details: { resource: 'item', id: 'x1' } });
    expect(new RangeNotSatisfiableError(20)).toMatchObject({
      kind: 'range_not_satisfiable',
      code: 'RANGE_NOT_SATISFIABLE',
      size: 20,
      details: { parameter: 'Range', size: 20 },
    });
  });
});

describe('UpstreamThrottledError', () => {
  it('carries the wait to pass on to the client', () => {
    const { UpstreamThrottledError } = jest.requireActual<typeof import('./errors')>('./errors');
    expect(new UpstreamThrottledError('SharePoint is throttling', 12, { upstreamStatus: 429 })).toMatchObject({
      kind: 'upstream_throttled',
      code: 'UPSTREAM_THROTTLED',
      retryAfterSeconds: 12,
      details: { retryAfterSeconds: 12, upstreamStatus: 429 },
    });
  });
});

describe('upstream answers shared by the remote drivers', () => {
  it('names the missing item, or quotes the server when the call named none', () => {
    expect(upstreamNotFound('/a/b', serverSaid('gone'))).toMatchObject({ code: 'ITEM_NOT_FOUND', message: "Item '/a/b' not found" });
    expect(upstreamNotFound(undefined, serverSaid('  no such path '))).toMatchObject({ message: 'Not found: no such path' });
  });

  it('blames the client parameter, quoting the server or naming the repository', () => {
    expect(refusedParameter('fileName', serverSaid('bad name'), 'SharePoint')).toMatchObject({ parameter: 'fileName', message: "Invalid parameter 'fileName': bad name" });
    expect(refusedParameter('fileName', serverSaid(undefined), 'SharePoint').message).toBe("Invalid parameter 'fileName': refused by SharePoint");
  });
});
