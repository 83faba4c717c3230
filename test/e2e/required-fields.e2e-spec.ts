import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: { type?: string };
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: { $ref?: string } }> };
}
interface Schema {
  required?: string[];
}

/** A value for each path parameter that passes its own checks (the default connector, a job id). */
const PATH_VALUES: Record<string, string> = { connectorId: 'fs', jobId: '1', jobid: '1', id: 'x', userId: 'alice', username: 'alice' };

/**
 * Walks every route of the OpenAPI document: a JSON body without its required fields, and a request
 * without its required query parameters, answer 400 naming a missing one with "… is required", not a
 * type error ("id must be a string") that sends the client looking for a wrong value.
 */
describe('Required fields say they are required', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  const operations = (): Array<[string, string, Operation]> =>
    Object.entries(gw.openApi.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'post', 'put', 'delete', 'patch'].includes(method))
        .map(([method, op]): [string, string, Operation] => [method, path, op]),
    );
  const url = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => PATH_VALUES[name] ?? '1');

  it('a JSON body without its required fields', async () => {
    const checked: string[] = [];
    for (const [method, path, op] of operations()) {
      const ref = op.requestBody?.content?.['application/json']?.schema?.$ref;
      if (!ref) continue;
      const schema = (gw.openApi.components?.schemas as Record<string, Schema>)[ref.split('/').pop()!];
      if (!schema.required?.length) continue;
      const res = await (gw.http() as unknown as Record<string, (u: string) => import('supertest').Test>)[method](url(path)).set('Authorization', adminAuth()).send({});
      checked.push(`${method} ${path}`);
      expect({ route: `${method} ${path}`, status: res.status }).toEqual({ route: `${method} ${path}`, status: 400 });
      expect({ route: `${method} ${path}`, parameter: schema.required.includes(res.body.error.parameter as string) }).toEqual({ route: `${method} ${path}`, parameter: true });
      expect({ route: `${method} ${path}`, message: res.body.message as string }).toEqual({ route: `${method} ${path}`, message: expect.stringMatching(/is required/) });
    }
    expect(checked.length).toBeGreaterThanOrEqual(4);
  });

  it('a request without its required query parameters', async () => {
    const checked: string[] = [];
    for (const [method, path, op] of operations()) {
      const required = (op.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => p.name);
      // The search routes check their parameters once a search connector is found: the search contract
      // covers them (q, fl...), this gateway has none.
      if (required.length === 0 || op.requestBody || path.startsWith('/api/search/')) continue;
      const res = await (gw.http() as unknown as Record<string, (u: string) => import('supertest').Test>)[method](url(path)).set('Authorization', adminAuth());
      checked.push(`${method} ${path}`);
      expect({ route: `${method} ${path}`, status: res.status }).toEqual({ route: `${method} ${path}`, status: 400 });
      expect({ route: `${method} ${path}`, message: res.body.message as string }).toEqual({ route: `${method} ${path}`, message: expect.stringMatching(/is required/) });
    }
    expect(checked.length).toBeGreaterThanOrEqual(10);
  });
});
