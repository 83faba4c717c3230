import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * When GATEWAY_TEST_POSTGRES_URL points at a PostgreSQL server (set by
 * scripts/test.sh for the PostgreSQL pass), or `admin` names one, returns the URL
 * of a new, empty database on it; otherwise undefined (the gateway then uses SQLite).
 */
export async function createTestDatabaseUrl(admin = process.env.GATEWAY_TEST_POSTGRES_URL): Promise<string | undefined> {
  if (!admin) return undefined;
  const name = `gw_test_${randomBytes(6).toString('hex')}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function dropTestDatabase(databaseUrl: string, admin = process.env.GATEWAY_TEST_POSTGRES_URL): Promise<void> {
  if (!admin) return;
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
