import type { Test } from 'supertest';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';

interface Parameter {
  name: string;
  in: string;
  explode?: boolean;
  schema?: { type?: string; additionalProperties?: unknown; example?: unknown; enum?: unknown[] };
  example?: unknown;
}
interface Operation {
  parameters?: Parameter[];
}

/** A value for each path parameter that passes its own checks (the default connector, a job id). */
const PATH_VALUES: Record<string, string> = { connectorId: 'fs', jobId: '1', jobid: '1', id: 'x', userId: 'alice', username: 'alice' };

/**
 * Neither a parameter of any route nor a free `<property>=<value>` name (those start with a letter), so every
 * route must refuse it; `dryRun` is the name a client asking for a dry run would try: every route but the one that
 * declares it (`start`) refuses it (on the update routes it is a property name like any other, so they take it).
 */
const UNKNOWN = '_unknown';
const DRY_RUN = 'dryRun';

/**
 * Walks every operation of the OpenAPI document (issue 35): an unknown query parameter is a 400 naming it on
 * every route, before anything runs; each documented parameter (and each name of a free-form one, from its
 * example) is not refused as unknown, so the document lists every name the gateway takes.
 */
describe('Unknown query parameters are refused on every route', () => {
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
  const call = (method: string, target: string): Test =>
    (gw.http() as unknown as Record<string, (u: string) => Test>)[method](target).set('Authorization', adminAuth());
  const freeForm = (p: Parameter) => p.schema?.type === 'object' && p.schema.additionalProperties !== undefined;
  /** The query names an operation documents: plain parameters, and the example names of a free-form one. */
  const declared = (op: Operation): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const p of (op.parameters ?? []).filter((q) => q.in === 'query')) {
      if (freeForm(p)) Object.assign(out, (p.schema?.example ?? p.example) as Record<string, string>);
      else out[p.name] = JSON.stringify(p.schema?.enum?.[0] ?? p.schema?.example ?? p.example ?? 'x').replace(/^"(.*)"$/, '$1');
    }
    return out;
  };

  it('an unknown parameter is a 400 naming it', async () => {
    const checked: string[] = [];
    for (const [method, path, op] of operations()) {
      const names = (op.parameters ?? []).some((p) => p.in === 'query' && freeForm(p)) || DRY_RUN in declared(op) ? [UNKNOWN] : [UNKNOWN, DRY_RUN];
      for (const name of names) {
        const route = `${method} ${path}?${name}`;
        const res = await call(method, `${url(path)}?${name}=true`);
        checked.push(route);
        expect({ route, status: res.status, parameter: (res.body as { error?: { parameter?: string } }).error?.parameter }).toEqual({ route, status: 400, parameter: name });
        expect({ route, message: (res.body as { message?: string }).message }).toEqual({ route, message: expect.stringContaining(`Unknown parameter '${name}'`) });
      }
    }
    expect(checked.length).toBeGreaterThanOrEqual(100);
  });

  it('beside a documented parameter, an unknown one is still named', async () => {
    for (const [method, path, op] of operations()) {
      const names = declared(op);
      if (Object.keys(names).length === 0) continue;
      const route = `${method} ${path}`;
      const res = await call(method, url(path)).query({ ...names, [UNKNOWN]: '1' });
      expect({ route, status: res.status, message: (res.body as { message?: string }).message }).toEqual({
        route,
        status: 400,
        message: expect.stringMatching(/^Unknown parameter '_unknown' \(known: /),
      });
    }
  });

  it('every documented parameter is accepted as a name', async () => {
    const checked: string[] = [];
    for (const [method, path, op] of operations()) {
      const names = declared(op);
      if (Object.keys(names).length === 0) continue;
      const route = `${method} ${path}`;
      // The values may still be refused (a missing document, a wrong kind), but never the names.
      const res = await call(method, url(path)).query(names);
      checked.push(route);
      expect({ route, message: (res.body as { message?: string } | undefined)?.message ?? '' }).toEqual({ route, message: expect.not.stringMatching(/Unknown parameter/) });
    }
    expect(checked.length).toBeGreaterThanOrEqual(25);
  });
});
