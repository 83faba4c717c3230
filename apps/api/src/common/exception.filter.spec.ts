import { Logger, type ArgumentsHost } from '@nestjs/common';
import { NotFoundError } from '@gateway/errors';
import { GatewayExceptionFilter } from './exception.filter';

/** A response that records what the filter wrote. */
function host(req: Record<string, unknown>) {
  const sent: { status?: number; body?: unknown; headers: Record<string, string> } = { headers: {} };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => void (sent.headers[name] = value),
    status(code: number) {
      sent.status = code;
      return this;
    },
    json: (body: unknown) => void (sent.body = body),
  };
  const argumentsHost = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ArgumentsHost;
  return { argumentsHost, sent };
}

describe('GatewayExceptionFilter', () => {
  const request = { id: 'req-7f3', path: '/api/content/x', url: '/api/content/x?key=secret', method: 'GET', headers: {}, complete: true };
  let logged: unknown[][];
  beforeEach(() => {
    logged = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((...args: unknown[]) => void logged.push(args));
  });
  afterEach(() => jest.restoreAllMocks());

  it('logs an unexpected error with the request id and the path, never the query string', () => {
    const { argumentsHost, sent } = host(request);
    new GatewayExceptionFilter().catch(new TypeError('x is undefined'), argumentsHost);
    expect(sent.status).toBe(500);
    expect(logged).toHaveLength(1);
    const [fields, message] = logged[0] as [Record<string, unknown>, string];
    expect(message).toBe('Unhandled error');
    expect(fields).toMatchObject({ reqId: 'req-7f3', path: '/api/content/x' });
    expect(JSON.stringify(logged)).not.toContain('secret');
  });

  it('does not log a typed error: the response says it all', () => {
    const { argumentsHost, sent } = host(request);
    new GatewayExceptionFilter().catch(new NotFoundError('document', 'x'), argumentsHost);
    expect(sent.status).toBe(404);
    expect(logged).toHaveLength(0);
  });
});
