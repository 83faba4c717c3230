import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import request from 'supertest';
import { createGatewayApp } from '../../apps/api/src/bootstrap';
import { loadConfig, type GatewayConfig } from '../../apps/api/src/config/gateway-config';
import { createTestDatabaseUrl, dropTestDatabase } from './database';

export const ADMIN = { username: 'admin', password: 'admin-password-for-tests' };

export interface TestGateway {
  app: NestExpressApplication;
  config: GatewayConfig;
  openApi: OpenAPIObject;
  dataDir: string;
  /** supertest agent bound to the in-process HTTP server. */
  http: () => ReturnType<typeof request>;
  /** Base path of the API, including any context prefix: '/api' or '/gateway/api'. */
  api: string;
  close: () => Promise<void>;
}

export interface StartOptions {
  /** Extra environment, exactly as a user would set it (PORT, GATEWAY_CONFIG, TRUST_PROXY, ...). */
  env?: Record<string, string | undefined>;
  /** Reuse a data directory (restart scenarios); default a new temporary one. */
  dataDir?: string;
  /** Keep the data directory when closing. */
  keepData?: boolean;
}

/**
 * Boots the gateway through the same createGatewayApp() that main.ts uses, on
 * a fresh data directory. With GATEWAY_TEST_POSTGRES_URL set (the PostgreSQL
 * pass of `npm test`), each gateway gets a database of its own on that server.
 */
export async function startGateway(options: StartOptions = {}): Promise<TestGateway> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-e2e-'));
  const databaseUrl = options.env?.DATABASE_URL === undefined ? await createTestDatabaseUrl() : undefined;
  const env: Record<string, string | undefined> = {
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_USER: ADMIN.username,
    GATEWAY_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: process.env.GATEWAY_TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: databaseUrl,
    ...options.env,
  };
  const config = loadConfig(env);
  const { app, openApi } = await createGatewayApp(config);
  const server = app.getHttpServer();
  return {
    app,
    config,
    openApi,
    dataDir,
    http: () => request(server),
    api: `${config.contextPath}/api`,
    close: async () => {
      await app.close();
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      if (!options.keepData && !options.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function basic(username: string, password: string): string {
  return 'Basic ' + Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}

export const adminAuth = () => basic(ADMIN.username, ADMIN.password);
