/**
 * Jest globalSetup of the `medium` project (jest.config.js): the specs there run each case on a real SQLite and a
 * real PostgreSQL (test/support/databases.ts). PostgreSQL is the harness's (test/engines, Debian's server, fsync
 * off), started here once for the run; GATEWAY_TEST_POSTGRES_URL, when set, names a server to use instead. Either
 * way the workers find the admin URL in GATEWAY_MEDIUM_POSTGRES_URL. A server that does not start fails the run.
 */
import { ENGINES_FILE_ENV, startEngines } from '../engines';
import { writeEnginesFile } from '../engines/engines';
import { MEDIUM_POSTGRES_ENV } from './env';

export default async function globalSetup(): Promise<void> {
  const given = process.env.GATEWAY_TEST_POSTGRES_URL;
  if (given) {
    process.env[MEDIUM_POSTGRES_ENV] = given;
    return;
  }
  const started = Date.now();
  const { postgres } = await startEngines(['postgres'], { log: () => undefined });
  process.env[ENGINES_FILE_ENV] = writeEnginesFile({ postgres });
  process.env[MEDIUM_POSTGRES_ENV] = postgres.url;
  process.stderr.write(`[medium] PostgreSQL up in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
