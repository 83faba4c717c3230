import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabaseUrl, dropTestDatabase } from '../support/database';
import { adminAuth, basic, startGateway } from '../support/gateway';

function writeYaml(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-config-'));
  const file = path.join(dir, 'gateway.yaml');
  fs.writeFileSync(file, text);
  return file;
}

describe('GATEWAY_CONFIG file', () => {
  it('declares connectors and users, with ${ENV} secrets interpolated', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-repo-'));
    const file = writeYaml(`
connectors:
  - id: docs
    typeId: filesystem
    description: Team documents
    params:
      root: \${DOCS_ROOT}
  - id: archive
    typeId: filesystem
    params:
      root: ${root}/archive
users:
  - username: reader
    password: \${READER_PASSWORD}
    roles: [user]
`);
    const gw = await startGateway({ env: { GATEWAY_CONFIG: file, DOCS_ROOT: `${root}/docs`, READER_PASSWORD: 'reader-secret-1' } });
    try {
      const res = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', basic('reader', 'reader-secret-1')).expect(200);
      expect(res.body.results).toEqual([
        { id: 'docs', description: 'Team documents', connectorId: 'docs', typeId: 'filesystem' },
        { id: 'archive', description: '', connectorId: 'archive', typeId: 'filesystem' },
      ]);
      expect(fs.existsSync(`${root}/docs`)).toBe(true);
      // no default fs connector when the file declares connectors
      await gw.http().get(`${gw.api}/repo/fs/types`).set('Authorization', adminAuth()).expect(404);
      // the reader is not an admin
      await gw.http().get(`${gw.api}/admin/users`).set('Authorization', basic('reader', 'reader-secret-1')).expect(403);
    } finally {
      await gw.close();
    }
  });

  it('stops start-up on an unknown connector type, naming the key and the known types', async () => {
    const file = writeYaml('connectors:\n  - {id: x, typeId: nosuchkind}\n');
    await expect(startGateway({ env: { GATEWAY_CONFIG: file } })).rejects.toThrow(/connectors\[0\]\.typeId: unknown connector type 'nosuchkind' \(known: filesystem/);
  });

  it('stops start-up on a connector missing a required param, naming it', async () => {
    const file = writeYaml('connectors:\n  - {id: x, typeId: filesystem, params: {}}\n');
    await expect(startGateway({ env: { GATEWAY_CONFIG: file } })).rejects.toThrow(/connectors\[0\]\.params\.root/);
  });

  it('refuses a DATABASE_URL that is not PostgreSQL', async () => {
    await expect(startGateway({ env: { DATABASE_URL: 'mysql://x@y/z' } })).rejects.toThrow(/DATABASE_URL must start with postgres/);
  });
});

describe('Persistence across restarts', () => {
  it('keeps users and the bootstrap admin, and does not recreate the admin', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-restart-'));
    const databaseUrl = await createTestDatabaseUrl(); // undefined on the SQLite pass
    const env = { DATABASE_URL: databaseUrl ?? '' };
    const first = await startGateway({ dataDir, env });
    await first.http().post(`${first.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'frank', password: 'frank-password-1', roles: ['user'] }).expect(201);
    await first.close();

    // Second start without GATEWAY_ADMIN_PASSWORD: the stored admin stays, nothing is regenerated.
    const second = await startGateway({ dataDir, env: { ...env, GATEWAY_ADMIN_PASSWORD: undefined } });
    try {
      await second.http().get(`${second.api}/repo/connections`).set('Authorization', basic('frank', 'frank-password-1')).expect(200);
      await second.http().get(`${second.api}/admin/users`).set('Authorization', adminAuth()).expect(200);
      const ready = await second.http().get(`${second.api}/health/ready`).expect(200);
      expect(ready.body.results.details.database.engine).toBe(databaseUrl ? 'postgres' : 'sqlite');
      // The SQLite file exists exactly when no PostgreSQL URL was given.
      expect(fs.existsSync(path.join(dataDir, 'gateway.sqlite'))).toBe(!databaseUrl);
    } finally {
      await second.close();
      if (databaseUrl) await dropTestDatabase(databaseUrl);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
