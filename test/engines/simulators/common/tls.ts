/**
 * The simulators' test PKI: one CA, one server certificate for 127.0.0.1 and localhost signed by it,
 * and an application certificate that an app registration of the identity provider can hold (the
 * client_assertion credential of MSAL). Made with the openssl CLI (installed on every machine the
 * harness runs on) rather than an npm PKI library: four commands, no dependency to keep.
 *
 * Files are generated into the given folder once and reused when present, so both simulators (and
 * a gateway pointed at them from outside the tests) can share one `caFile`. Generation happens in a
 * sibling temporary folder that is renamed into place, so two simulators starting at the same time
 * never see half-written files.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface TestTls {
  /** PEM of the test CA: what a client passes as `caFile`. */
  caFile: string;
  /** PEM of the server certificate (SAN IP:127.0.0.1, DNS:localhost). */
  certFile: string;
  /** PEM of the server certificate's private key. */
  keyFile: string;
}

export interface AppCertificate {
  /** PEM holding the private key followed by the certificate (the `certificatePath` of a connector). */
  pemFile: string;
  certFile: string;
  keyFile: string;
  /** SHA-1 of the DER certificate, upper-case hex: what Entra shows and MSAL's `thumbprint` takes. */
  thumbprint: string;
  /** SHA-256 of the DER certificate, upper-case hex (MSAL's `thumbprintSha256`). */
  thumbprintSha256: string;
}

function openssl(args: string[], cwd: string): void {
  const result = spawnSync('openssl', args, { cwd, encoding: 'utf8' });
  if (result.error) throw new Error(`openssl ${args[0]}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`openssl ${args.join(' ')} failed (exit ${result.status}): ${result.stderr}`);
}

/** Runs `make` in a fresh sibling folder and renames it to `dir` unless another process won the race. */
function generateOnce(dir: string, expected: string[], make: (work: string) => void): void {
  if (expected.every((f) => fs.existsSync(path.join(dir, f)))) return;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const work = fs.mkdtempSync(`${dir}.tmp-`);
  try {
    make(work);
    try {
      fs.renameSync(work, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Someone else renamed theirs first (or an incomplete folder is in the way): keep a complete one.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
      if (!expected.every((f) => fs.existsSync(path.join(dir, f)))) {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(work, dir);
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The CA and the 127.0.0.1/localhost server certificate in `dir` (generated when missing). */
export function ensureTestTls(dir: string): TestTls {
  const files = ['ca.pem', 'server.pem', 'server.key'];
  generateOnce(dir, [...files, 'ca.key'], (work) => {
    openssl(
      [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650',
        '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=Content Gateway simulators test CA',
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
      ],
      work,
    );
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1'], work);
    fs.writeFileSync(
      path.join(work, 'server.ext'),
      [
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        '',
      ].join('\n'),
    );
    openssl(
      [
        'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
        '-sha256', '-days', '825', '-out', 'server.pem', '-extfile', 'server.ext',
      ],
      work,
    );
  });
  return { caFile: path.join(dir, 'ca.pem'), certFile: path.join(dir, 'server.pem'), keyFile: path.join(dir, 'server.key') };
}

/** Thumbprints of a PEM certificate as Entra computes them (hash of the DER encoding). */
export function certificateThumbprints(certPem: string | Buffer): { sha1: string; sha256: string } {
  const der = new crypto.X509Certificate(certPem).raw;
  return {
    sha1: crypto.createHash('sha1').update(der).digest('hex').toUpperCase(),
    sha256: crypto.createHash('sha256').update(der).digest('hex').toUpperCase(),
  };
}

/** A self-signed application certificate `name` in `dir` (generated when missing). */
export function ensureAppCertificate(dir: string, name = 'app'): AppCertificate {
  const target = path.join(dir, `cert-${name}`);
  generateOnce(target, ['app.pem', 'app.key', 'app-with-key.pem'], (work) => {
    openssl(
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650', '-keyout', 'app.key', '-out', 'app.pem', '-subj', `/CN=${name}`],
      work,
    );
    fs.writeFileSync(
      path.join(work, 'app-with-key.pem'),
      Buffer.concat([fs.readFileSync(path.join(work, 'app.key')), fs.readFileSync(path.join(work, 'app.pem'))]),
    );
  });
  const certFile = path.join(target, 'app.pem');
  const { sha1, sha256 } = certificateThumbprints(fs.readFileSync(certFile));
  return { pemFile: path.join(target, 'app-with-key.pem'), certFile, keyFile: path.join(target, 'app.key'), thumbprint: sha1, thumbprintSha256: sha256 };
}
