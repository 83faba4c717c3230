import { randomBytes } from 'node:crypto';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { createUser, listen, seedDocument, sha256 } from '../support/files';

/** GET the connections as `auth` from `address` (TRUST_PROXY is on); resolves to the status and Retry-After. */
async function attempt(base: string, api: string, auth: string, address: string): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${base}${api}/repo/connections`, { headers: { Authorization: auth, 'X-Forwarded-For': address } });
  await res.arrayBuffer();
  return { status: res.status, retryAfter: res.headers.get('retry-after') };
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** Runs `total` calls of `fn`, `width` at a time. */
async function inWaves<T>(total: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < total; start += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, total - start) }, (_, k) => fn(start + k)))));
  }
  return results;
}

describe('Login lock-out under parallel attempts (issue 16, defect 1)', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({
      env: { GATEWAY_LOGIN_MAX_FAILURES: '10', GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000', GATEWAY_LOGIN_LOCKOUT_SECONDS: '300', TRUST_PROXY: 'true', GATEWAY_LOGIN_VERIFY_QUEUE: '1000' },
    });
    base = await listen(gw);
    await createUser(gw, 'victim');
    await createUser(gw, 'twin');
  });
  afterAll(() => gw.close());

  it('evaluates no more than the limit of 50 different wrong passwords sent at once for one user from one address', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => attempt(base, gw.api, basic('victim', `wrong-password-${i}`), '10.1.0.1')),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 401: 10, 429: 40 });
    expect(results.filter((r) => r.status === 429).every((r) => Number(r.retryAfter) > 0)).toBe(true);
    // The lock holds for the right password too, from that address only.
    expect((await attempt(base, gw.api, basic('victim', 'victim-password-1'), '10.1.0.1')).status).toBe(429);
    expect((await attempt(base, gw.api, basic('victim', 'victim-password-1'), '10.1.0.2')).status).toBe(200);
  });

  it('counts the same wrong password sent 50 times at once as 50 attempts', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => attempt(base, gw.api, basic('twin', 'the-same-wrong-one'), '10.1.0.3')));
    expect(tally(results.map((r) => r.status))).toEqual({ 401: 10, 429: 40 });
  });

  it('lets the right password sent many times at once through, each of them', async () => {
    await createUser(gw, 'burst');
    const results = await Promise.all(Array.from({ length: 30 }, () => attempt(base, gw.api, basic('burst', 'burst-password-1'), '10.1.0.4')));
    expect(tally(results.map((r) => r.status))).toEqual({ 200: 30 });
  });
});

describe('Failures counted per address across user names', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { GATEWAY_LOGIN_MAX_FAILURES: '10', GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '20', TRUST_PROXY: 'true', GATEWAY_LOGIN_VERIFY_QUEUE: '1000' } });
    base = await listen(gw);
    await createUser(gw, 'bystander');
  });
  afterAll(() => gw.close());

  it('refuses an address after its limit of failures spread over many user names, and no other address', async () => {
    const results = await inWaves(30, 10, (i) => attempt(base, gw.api, basic(`sprayed-${i}`, 'wrong-password'), '10.2.0.1'));
    expect(tally(results.map((r) => r.status))).toEqual({ 401: 20, 429: 10 });
    // A user whose credentials were never verified from there is refused from there too, before any argon2 work...
    expect((await attempt(base, gw.api, basic('bystander', 'bystander-password-1'), '10.2.0.1')).status).toBe(429);
    // ...and unaffected elsewhere.
    expect((await attempt(base, gw.api, basic('bystander', 'bystander-password-1'), '10.2.0.2')).status).toBe(200);
  });
});

describe('Password verification in a bounded pool', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({
      env: { TRUST_PROXY: 'true', GATEWAY_LOGIN_VERIFY_THREADS: '1', GATEWAY_LOGIN_VERIFY_QUEUE: '0', GATEWAY_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000' },
    });
    base = await listen(gw);
  });
  afterAll(() => gw.close());

  it('answers 503 with Retry-After, not a long wait, once the threads and their queue are full', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(base, gw.api, basic(`user-${i}`, 'wrong-password'), `10.3.0.${i}`)));
    const statuses = new Set(results.map((r) => r.status));
    expect([...statuses].every((s) => s === 401 || s === 503)).toBe(true);
    const busy = results.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy.every((r) => r.retryAfter === '1')).toBe(true);
    // Refused, not evaluated: those addresses were not charged an attempt (the admin still logs in at once).
    expect((await attempt(base, gw.api, adminAuth(), '10.3.0.19')).status).toBe(200);
  });
});

describe('A login flood next to a download (issue 16, resource exhaustion)', () => {
  let gw: TestGateway;
  let base: string;
  beforeAll(async () => {
    gw = await startGateway({ env: { TRUST_PROXY: 'true' } });
    base = await listen(gw);
  });
  afterAll(() => gw.close());

  it('400 wrong logins, 50 at a time, from one address leave a cached-credential download complete and answer only 401/429/503', async () => {
    const content = randomBytes(20 * 1024 * 1024);
    const id = await seedDocument(gw, 'flood/big.bin', content);
    const download = async () => {
      const res = await fetch(`${base}${gw.api}/repo/fs/file?id=${encodeURIComponent(id)}`, { headers: { Authorization: adminAuth() } });
      expect(res.status).toBe(200);
      return sha256(Buffer.from(await res.arrayBuffer()));
    };
    expect(await download()); // caches the admin's credentials
    const flood = inWaves(400, 50, (i) => attempt(base, gw.api, basic(`flood-${i}-${randomBytes(4).toString('hex')}`, 'wrong-password'), '10.4.0.1'));
    const downloaded = await download();
    const statuses = (await flood).map((r) => r.status);
    expect(downloaded).toBe(sha256(content));
    expect(Object.keys(tally(statuses)).filter((s) => !['401', '429', '503'].includes(s))).toEqual([]);
  });
});
