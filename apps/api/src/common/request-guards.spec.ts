import type { NextFunction, Request, Response } from 'express';
import { InvalidArgumentError } from '@gateway/errors';
import type { OpenAPIObject } from '@nestjs/swagger';
import { MethodTable, strictUtf8Url } from './request-guards';

/** What strictUtf8Url hands to next() for this URL: undefined (passed) or the error. */
function verdict(url: string): unknown {
  let passed: unknown = 'not called';
  strictUtf8Url({ originalUrl: url, url } as Request, {} as Response, ((err?: unknown) => (passed = err)) as NextFunction);
  return passed;
}

describe('strictUtf8Url', () => {
  it.each([
    '/api/repo/fs/file?id=abc',
    '/api/repo/fs/file?id=%C3%A9t%C3%A9',
    '/api/repo/fs/%E2%82%AC/file',
    '/api/search/solr/select?q=size%3A%5B1000%20TO%2020000%5D&rows=10',
    // A malformed escape is not an encoding error: it is sent on as it came.
    '/api/repo/fs/file?id=100%zz',
    '/api/repo/fs/file?id=%',
    '/api/repo/fs/file?a%20b=%F0%9F%98%80',
  ])('passes %s', (url) => {
    expect(verdict(url)).toBeUndefined();
  });

  it.each([
    ['/api/repo/%C3%28/file', 'url'],
    ['/api/repo/fs/file?id=%FF', 'id'],
    // A truncated sequence followed by a plain character, and one beside a malformed escape.
    ['/api/repo/fs/file?id=%C3a', 'id'],
    ['/api/repo/fs/file?id=%zz%C3', 'id'],
    ['/api/repo/fs/file?%FF=1', 'query'],
  ])('refuses %s, naming %s', (url, parameter) => {
    const err = verdict(url);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect(err).toMatchObject({ code: 'INVALID_ENCODING' });
    expect((err as InvalidArgumentError).message).toMatch(parameter === 'url' ? /request path/ : parameter === 'query' ? /parameter name/ : new RegExp(`'${parameter}'`));
  });
});

describe('MethodTable', () => {
  const table = new MethodTable();
  table.load(
    {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: {
        '/api/repo/{connectorId}/file': { get: {}, delete: {} },
        '/api/repo/__BATCH__/file': { post: {} },
        '/api/repo/{connectorId}/folderitems': { get: {} },
      },
    } as unknown as OpenAPIObject,
    '/ctx',
  );

  /** What the middleware does with this request: 'next', or the 405 with its Allow header. */
  function decide(method: string, path: string): string {
    let allow: unknown;
    let out = 'unset';
    const res = { setHeader: (_name: string, value: unknown) => (allow = value) } as unknown as Response;
    table.middleware()({ method, path } as Request, res, ((err?: unknown) => (out = err ? `405 ${String(allow)}` : 'next')) as NextFunction);
    return out;
  }

  it('passes a documented method, with or without a trailing slash, and HEAD where GET is documented', () => {
    expect(decide('GET', '/ctx/api/repo/fs/file')).toBe('next');
    expect(decide('DELETE', '/ctx/api/repo/fs/file/')).toBe('next');
    expect(decide('HEAD', '/ctx/api/repo/fs/folderitems')).toBe('next');
  });

  it('answers 405 naming the allowed methods; a literal segment wins over a parameter', () => {
    expect(decide('PUT', '/ctx/api/repo/fs/file')).toBe('405 GET, DELETE, HEAD');
    expect(decide('PUT', '/ctx/api/repo/fs/file/')).toBe('405 GET, DELETE, HEAD');
    expect(decide('GET', '/ctx/api/repo/__BATCH__/file')).toBe('405 POST');
    expect(decide('TRACE', '/ctx/api/repo/fs/file')).toBe('405 GET, DELETE, HEAD');
  });

  it('leaves undocumented paths to routing (404), whatever their length', () => {
    expect(decide('PUT', '/ctx/api/repo/fs/file/extra')).toBe('next');
    expect(decide('PUT', '/ctx/api/repo/fs')).toBe('next');
    expect(decide('PUT', '/api/repo/fs/file')).toBe('next');
  });
});
