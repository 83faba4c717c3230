import { createHmac } from 'node:crypto';
import { signatureHeader, verifySignature } from './webhook-signature';

describe('webhook signatures', () => {
  const secret = 'whsec-0123456789abcdef';
  const body = '{"id":"evt_1","type":"run.completed"}';

  it('signs "<t>.<body>" with HMAC-SHA256 under the secret, as t=<unix>,v1=<hex>', () => {
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    expect(signatureHeader(secret, 1_700_000_000, body)).toBe(`t=1700000000,v1=${expected}`);
    // A fixed vector, so the scheme cannot drift unnoticed from what receivers were told.
    expect(signatureHeader('k'.repeat(16), 1, 'x')).toBe(`t=1,v1=${createHmac('sha256', 'kkkkkkkkkkkkkkkk').update('1.x').digest('hex')}`);
  });

  it('verifies its own signature and refuses a changed body, another secret, a stale or missing timestamp', () => {
    const header = signatureHeader(secret, 1_700_000_000, body);
    expect(verifySignature(secret, header, body, 1_700_000_010)).toBe(true);
    expect(verifySignature(secret, header, body.replace('completed', 'failed'), 1_700_000_010)).toBe(false);
    expect(verifySignature('another-secret-of-16', header, body, 1_700_000_010)).toBe(false);
    expect(verifySignature(secret, header, body, 1_700_000_000 + 301)).toBe(false);
    expect(verifySignature(secret, header.replace(/^t=\d+,/, ''), body, 1_700_000_010)).toBe(false);
    expect(verifySignature(secret, 't=1700000000,v1=zz', body, 1_700_000_010)).toBe(false);
  });

  it('accepts any one matching v1 among several (a secret being rotated)', () => {
    const header = signatureHeader(secret, 1_700_000_000, body);
    const other = signatureHeader('old-secret-of-16-chars', 1_700_000_000, body).split(',')[1];
    expect(verifySignature(secret, `${header.split(',')[0]},${other},${header.split(',')[1]}`, body, 1_700_000_000)).toBe(true);
  });
});
