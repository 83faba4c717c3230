import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mapServiceError, parseServiceError } from './service-errors';

const examples = join(__dirname, 'fixtures');
const example = (p: string) => readFileSync(join(examples, p), 'utf8');
const sp = { service: 'SharePoint', connectorType: 'sharepoint', id: '/Shared Documents/a.txt' };

describe('service error bodies', () => {
  it('reads the SharePoint verbose, SharePoint JSON light and Graph shapes', () => {
    expect(parseServiceError(404, example('sp-error--verbose-404.json'))).toMatchObject({
      status: 404,
      code: expect.stringContaining('System.IO.FileNotFoundException'),
      message: expect.any(String),
    });
    const light = parseServiceError(500, example('sp-error--jsonlight.json'));
    expect(light.code).toMatch(/^-?\d+, /);
    expect(typeof light.message).toBe('string');
    expect(parseServiceError(429, example('microsoft.graph.ODataErrors.ODataError--429-activityLimitReached.json'), 3)).toMatchObject({
      code: 'activityLimitReached',
      innerCodes: expect.arrayContaining(['throttledRequest']),
      retryAfterSeconds: 3,
    });
    expect(parseServiceError(502, '<html>Bad gateway</html>')).toEqual({ status: 502, innerCodes: [] });
  });

  it('maps not found, name conflicts, locks and lost preconditions to what the gateway user sees', () => {
    expect(mapServiceError(parseServiceError(404, example('sp-error--verbose-404.json')), sp)).toMatchObject({
      kind: 'not_found',
      details: { resource: 'item', id: '/Shared Documents/a.txt' },
    });
    expect(mapServiceError(parseServiceError(409, example('microsoft.graph.ODataErrors.ODataError--409-nameAlreadyExists.json')), { service: 'Microsoft Graph' })).toMatchObject({
      kind: 'conflict',
      code: 'ALREADY_EXISTS',
    });
    const spExists = JSON.stringify({ 'odata.error': { code: '-2130575257, Microsoft.SharePoint.SPException', message: { lang: 'en-US', value: 'A file with the name a.txt already exists.' } } });
    expect(mapServiceError(parseServiceError(400, spExists), sp)).toMatchObject({ kind: 'conflict', code: 'ALREADY_EXISTS' });
    expect(mapServiceError(parseServiceError(423, '{}'), sp)).toMatchObject({ kind: 'conflict', code: 'LOCKED' });
    const checkedOut = JSON.stringify({ error: { code: '-2130575306, Microsoft.SharePoint.SPFileCheckOutException', message: { lang: 'en-US', value: 'The file is checked out for editing by i:0#.f|membership|x' } } });
    expect(mapServiceError(parseServiceError(400, checkedOut), sp)).toMatchObject({ kind: 'conflict', code: 'LOCKED', message: expect.stringContaining('checked out for editing') });
    expect(mapServiceError(parseServiceError(412, '{"error":{"code":"resourceModified","message":"ETag mismatch"}}'), sp)).toMatchObject({
      kind: 'conflict',
      code: 'PRECONDITION_FAILED',
    });
  });

  it('maps throttling to 503-with-Retry-After, server failures to 502, refusals to 403 and bad parameters to 400', () => {
    const throttled = mapServiceError(parseServiceError(429, '', 9), sp);
    expect(throttled).toMatchObject({ kind: 'upstream_throttled', retryAfterSeconds: 9 });
    expect(mapServiceError(parseServiceError(503, '', undefined), sp)).toMatchObject({ kind: 'upstream_throttled', retryAfterSeconds: 1 });
    expect(mapServiceError(parseServiceError(500, example('sp-error--list-view-threshold.json')), sp)).toMatchObject({
      kind: 'upstream_error',
      message: expect.stringContaining('list view threshold'),
      details: { upstreamStatus: 500 },
    });
    expect(mapServiceError(parseServiceError(403, '{"error":{"code":"accessDenied","message":"Access denied"}}'), sp).kind).toBe('permission_denied');
    expect(mapServiceError(parseServiceError(401, '{}'), sp)).toMatchObject({ kind: 'upstream_error', details: { upstreamStatus: 401 } });
    expect(mapServiceError(parseServiceError(400, '{"error":{"code":"invalidRequest","message":"bad name"}}'), { ...sp, parameter: 'name' })).toMatchObject({
      kind: 'invalid_argument',
      details: { parameter: 'name' },
    });
    expect(mapServiceError(parseServiceError(400, '{"error":{"code":"invalidRequest","message":"bad"}}'), sp).kind).toBe('upstream_error');
    expect(mapServiceError(parseServiceError(501, '{"error":{"code":"notSupported","message":"no"}}'), { ...sp, capability: 'versioning' })).toMatchObject({
      kind: 'not_supported',
      details: { capability: 'versioning', connectorType: 'sharepoint' },
    });
  });
});
