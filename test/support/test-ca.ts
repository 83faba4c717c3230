import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A throw-away CA in `dir` (ca.pem, ca.key) and a server certificate it signed for 127.0.0.1 and localhost
 * (srv.pem, srv.key): what a local HTTPS server needs for a client that trusts only a connector's caFile.
 */
export function makeTestCa(dir: string): { caFile: string; key: Buffer; cert: Buffer; openssl: (...args: string[]) => Buffer } {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'srv.pem', '-days', '2', '-extfile', 'ext.cnf');
  return { caFile: join(dir, 'ca.pem'), key: readFileSync(join(dir, 'srv.key')), cert: readFileSync(join(dir, 'srv.pem')), openssl };
}
