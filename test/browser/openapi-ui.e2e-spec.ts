import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { aptInstall } from '../engines/engines';
import { startNginx, type NginxHandle } from '../engines/nginx';
import { listen } from '../support/files';
import { ADMIN, startGateway, type TestGateway } from '../support/gateway';

/** Debian's chromium; playwright-core only drives it (no browser download). */
const CHROMIUM = process.env.GATEWAY_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots land here (git-ignored). */
const OUTPUT = path.join(__dirname, 'output');

/**
 * The OpenAPI UI behind nginx (docker/nginx.conf, /gateway) in a real headless browser: it
 * loads its assets through the proxy, authorizes with Basic, and "Try it out" on Get connections
 * answers 200 through the proxy.
 */
describe('OpenAPI UI through nginx in headless Chromium', () => {
  let gw: TestGateway;
  let nginx: NginxHandle;
  let browser: Browser;

  beforeAll(async () => {
    // Debian's chromium, installed like the harness's engines when missing (as root; otherwise a clear error).
    if (!fs.existsSync(CHROMIUM)) await aptInstall(['chromium'], (line) => process.stderr.write(`[browser] ${line}\n`));
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium (or set GATEWAY_TEST_CHROMIUM)`);
    gw = await startGateway({ env: { GATEWAY_CONTEXT_PATH: '/gateway', TRUST_PROXY: '127.0.0.1' } });
    nginx = await startNginx({ upstreams: [{ port: Number(new URL(await listen(gw)).port) }] });
    // --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    fs.mkdirSync(OUTPUT, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await nginx?.stop();
    await gw?.close();
  });

  it('authorizes with Basic and runs "Try it out" on Get connections: 200', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.url()} ${r.status()}`);
    });
    try {
      await page.goto(`${nginx.url}/gateway/api/docs`);
      await page.locator('button.authorize').first().click();
      await page.locator('input[aria-label="auth-basic-username"]').fill(ADMIN.username);
      await page.locator('input[aria-label="auth-basic-password"]').fill(ADMIN.password);
      await page.locator('.modal-ux button.authorize').click();
      await page.locator('.modal-ux button.btn-done').click();

      const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-description', { hasText: /^Get connections$/ }) });
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('button.try-out__btn').click();
      await operation.locator('button.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor();
      const body = await operation.locator('.live-responses-table .response-col_description pre').first().innerText();
      await page.screenshot({ path: path.join(OUTPUT, 'openapi-try-it-out.png'), fullPage: false });

      expect((await status.innerText()).trim()).toBe('200');
      expect(JSON.parse(body)).toMatchObject({ success: true, results: [{ id: 'fs', typeId: 'filesystem' }] });
      // The request went to the public address, through the proxy's context path.
      const curl = await operation.locator('.curl-command').innerText();
      expect(curl).toContain(`${nginx.url}/gateway/api/repo/connections`);
      expect(curl).toMatch(/Authorization: Basic /);
      expect(failed).toEqual([]);
    } catch (e) {
      await page.screenshot({ path: path.join(OUTPUT, 'openapi-try-it-out-failure.png'), fullPage: true }).catch(() => undefined);
      throw e;
    } finally {
      await page.close();
    }
  });
});
