import { startGateway, type TestGateway } from '../support/gateway';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Every route Express actually registered, as 'METHOD /path' with :params turned into {params}. */
function registeredRoutes(gw: TestGateway): string[] {
  const express = gw.app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] }; _router?: { stack: Layer[] } };
  const stack = (express.router ?? express._router)!.stack;
  const routes: string[] = [];
  for (const layer of stack) {
    if (!layer.route) continue;
    const path = layer.route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    if (path.includes('/docs')) continue; // the documentation serves itself
    const methods = Object.keys(layer.route.methods);
    // Middleware (request logging) is mounted with all(), which registers every HTTP verb.
    if (methods.length > 20) continue;
    for (const method of methods) {
      if (method === '_all') continue;
      routes.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return routes;
}

describe('OpenAPI document', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(() => gw.close());

  it('serves the document at /api/docs-json and the UI at /api/docs without credentials', async () => {
    const doc = await gw.http().get('/api/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(doc.body.servers).toEqual([{ url: '/' }]);
    const ui = await gw.http().get('/api/docs').redirects(1).expect(200);
    expect(ui.text).toContain('swagger-ui');
  });

  it('documents every registered route with its responses', async () => {
    const routes = registeredRoutes(gw);
    expect(routes.length).toBeGreaterThan(5);
    const doc = gw.openApi;
    const operation = (route: string) => {
      const [method, path] = route.split(' ');
      return doc.paths[path]?.[method.toLowerCase() as 'get'];
    };
    expect(routes.filter((route) => !operation(route))).toEqual([]);
    expect(routes.filter((route) => Object.keys(operation(route)?.responses ?? {}).length === 0)).toEqual([]);
  });

  it('documents the error answers and Basic authentication of protected routes', () => {
    const op = gw.openApi.paths['/api/repo/{connectorId}/repositoryInfo'].get!;
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '404', '502']));
    expect(op.security).toEqual([{ basic: [] }]);
    // A search connector answers 501 on every content route, a content connector lacking a group on its routes;
    // repositoryInfo answers for every kind.
    const contentRoutes = Object.entries(gw.openApi.paths).filter(([p]) => p.startsWith('/api/repo/{connectorId}/') && !p.endsWith('/repositoryInfo'));
    expect(contentRoutes.length).toBeGreaterThanOrEqual(15);
    for (const [path, item] of contentRoutes) {
      for (const [method, operation] of Object.entries(item as Record<string, { responses: Record<string, unknown> }>)) {
        expect({ route: `${method} ${path}`, answers501: '501' in operation.responses }).toEqual({ route: `${method} ${path}`, answers501: true });
      }
    }
    const health = gw.openApi.paths['/api/health'].get!;
    expect(health.security).toBeUndefined();
  });
});
