import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError, loadConfig } from '../config/gateway-config';

let folder: string;
beforeAll(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-webhooks-config-'));
});
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

function withFile(text: string): Record<string, string> {
  const file = path.join(folder, `gateway-${fs.readdirSync(folder).length}.yaml`);
  fs.writeFileSync(file, text);
  return { GATEWAY_CONFIG: file };
}

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.message.replace(/^GATEWAY_CONFIG \([^)]*\): /, '');
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('webhooks in the configuration', () => {
  it("reads the file's webhooks (with ${ENV} secrets) and the delivery settings", () => {
    const env = {
      ...withFile(`
webhooks:
  - url: https://ops.example.com/hooks/gateway
    events: [run.completed, run.failed]
    secret: \${HOOK_SECRET}
  - { url: "http://127.0.0.1:9000/x", events: [run.started], secret: another-secret-16 }
`),
      HOOK_SECRET: 'from-the-environment-1',
      GATEWAY_WEBHOOK_TIMEOUT_MS: '5000',
      GATEWAY_WEBHOOK_RETRY_BASE_MS: '1000',
      GATEWAY_WEBHOOK_RETRY_MAX_MS: '20000',
      GATEWAY_WEBHOOK_RETRY_HOURS: '2',
      GATEWAY_WEBHOOK_POLL_MS: '250',
      GATEWAY_WEBHOOK_CONCURRENCY: '4',
      GATEWAY_WEBHOOK_RETENTION_DAYS: '0',
    };
    expect(loadConfig(env).webhooks).toEqual({
      definitions: [
        { url: 'https://ops.example.com/hooks/gateway', events: ['run.completed', 'run.failed'], secret: 'from-the-environment-1' },
        { url: 'http://127.0.0.1:9000/x', events: ['run.started'], secret: 'another-secret-16' },
      ],
      timeoutMs: 5000,
      retryBaseMs: 1000,
      retryMaxMs: 20_000,
      retryWindowMs: 2 * 3_600_000,
      pollMs: 250,
      concurrency: 4,
      retentionDays: 0,
    });
  });

  it.each([
    ['an unknown key', 'webhooks:\n  - {url: "http://a/", events: [run.failed], secret: sixteen-chars-ok, retries: 3}\n', 'webhooks[0].retries: unknown key'],
    ['an unknown event', 'webhooks:\n  - {url: "http://a/", events: [run.paused], secret: sixteen-chars-ok}\n', 'webhooks[0].events: each of events must be one of run.started, run.completed, run.failed, run.completedWithErrors, run.aborted'],
    ['no event', 'webhooks:\n  - {url: "http://a/", events: [], secret: sixteen-chars-ok}\n', 'webhooks[0].events: must name at least one event'],
    ['another scheme', 'webhooks:\n  - {url: "ftp://a/", events: [run.failed], secret: sixteen-chars-ok}\n', 'webhooks[0].url: must be an http:// or https:// URL'],
    ['a short secret', 'webhooks:\n  - {url: "http://a/", events: [run.failed], secret: short}\n', 'webhooks[0].secret: must be at least 16 characters'],
    ['no secret', 'webhooks:\n  - {url: "http://a/", events: [run.failed]}\n', 'webhooks[0].secret: is required'],
    [
      'a duplicate url',
      'webhooks:\n  - {url: "http://a/", events: [run.failed], secret: sixteen-chars-ok}\n  - {url: "http://a/", events: [run.started], secret: sixteen-chars-ok}\n',
      "webhooks[1].url: duplicate webhook url 'http://a/'",
    ],
  ])('refuses %s, naming the key', (_what, text, message) => {
    expect(refusal(withFile(text))).toContain(message);
  });

  it('refuses a retry cap below the base', () => {
    expect(() => loadConfig({ GATEWAY_WEBHOOK_RETRY_BASE_MS: '5000', GATEWAY_WEBHOOK_RETRY_MAX_MS: '1000' })).toThrow(
      'GATEWAY_WEBHOOK_RETRY_MAX_MS: must be at least GATEWAY_WEBHOOK_RETRY_BASE_MS (5000)',
    );
  });
});
