import express from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import request from 'supertest';
import { securityHeaders } from './security-headers';

/** The headers of a GET answered by an Express app with `middleware` in front, the date and connection aside. */
async function headersBehind(middleware: express.RequestHandler): Promise<Record<string, unknown>> {
  const app = express();
  app.use(middleware);
  app.get('/x', (_req, res) => void res.json({ ok: true }));
  const res = await request(app).get('/x').expect(200);
  const { date: _date, connection: _connection, ...rest } = res.headers as Record<string, unknown>;
  return rest;
}

describe('securityHeaders', () => {
  const options: HelmetOptions = {
    contentSecurityPolicy: { directives: { 'img-src': ["'self'", 'data:'], 'style-src': ["'self'", "'unsafe-inline'"], 'upgrade-insecure-requests': null } },
    strictTransportSecurity: false,
  };

  it("sets exactly the headers helmet sets, with helmet's values", async () => {
    const computedOnce = await headersBehind(securityHeaders(options));
    const helmetItself = await headersBehind(helmet(options));
    expect(computedOnce).toEqual(helmetItself);
    expect(computedOnce).toMatchObject({ 'content-security-policy': expect.stringContaining("img-src 'self' data:"), 'x-content-type-options': 'nosniff' });
    expect(computedOnce).not.toHaveProperty('x-powered-by');
    expect(computedOnce).not.toHaveProperty('strict-transport-security');
  });

  it('refuses a CSP directive computed per request (a nonce), which a header computed once would get wrong', () => {
    const nonce = (_req: unknown, res: unknown) => `'nonce-${String((res as { locals?: { n?: string } }).locals?.n)}'`;
    expect(() => securityHeaders({ contentSecurityPolicy: { directives: { 'script-src': ["'self'", nonce] } } })).toThrow(/script-src/);
  });
});
