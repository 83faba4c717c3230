import type { Request } from 'express';
import { isRawBodyRoute } from './raw-body-routes';

const req = (method: string, path: string) => ({ method, path }) as Request;

describe('isRawBodyRoute', () => {
  it.each([
    ['PUT', '/api/repo/fs/update'],
    ['PUT', '/api/repo/fs/updateContent'],
    ['PUT', '/gateway/api/repo/docs.v2/updateContent/'],
    // Express routes case-insensitively, so the parsers must be skipped the same way.
    ['PUT', '/api/repo/fs/UPDATECONTENT'],
  ])('%s %s takes its body raw', (method, path) => {
    expect(isRawBodyRoute(req(method, path))).toBe(true);
  });

  it.each([
    ['PUT', '/api/repo/fs/updateProperties'],
    ['POST', '/api/repo/fs/update'],
    ['POST', '/api/admin/users'],
    ['PUT', '/api/repo/fs/x/update'],
  ])('%s %s leaves its body to the parsers', (method, path) => {
    expect(isRawBodyRoute(req(method, path))).toBe(false);
  });
});
