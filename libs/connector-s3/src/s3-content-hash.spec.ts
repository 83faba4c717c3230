import { createHash, randomBytes } from 'node:crypto';
import { EtagDigest } from './s3-content-hash';

const md5 = (b: Buffer) => createHash('md5').update(b).digest();

/** S3's ETag of what MultipartWriter sends with parts of `partBytes`: one PUT up to a part, parts beyond. */
describe('EtagDigest', () => {
  const etagOf = (data: Buffer, partBytes: number, chunk: number) => {
    const digest = new EtagDigest(partBytes);
    for (let at = 0; at < data.length; at += chunk) digest.update(data.subarray(at, at + chunk));
    return digest.digest();
  };

  it.each([0, 1, 10, 16])('content of %i bytes with parts of 16 (one PUT): the MD5 of the content', (size) => {
    const data = randomBytes(size);
    expect(etagOf(data, 16, 3)).toBe(md5(data).toString('hex'));
  });

  it.each([
    [17, 2],
    [32, 2],
    [33, 3],
  ])('content of %i bytes with parts of 16: the MD5 of the %i parts\' MD5s, then -parts, however the chunks fall', (size, parts) => {
    const data = randomBytes(size);
    const partDigests = Array.from({ length: parts }, (_, i) => md5(data.subarray(i * 16, (i + 1) * 16)));
    const expected = `${createHash('md5').update(Buffer.concat(partDigests)).digest('hex')}-${parts}`;
    for (const chunk of [1, 5, 16, 100]) expect(etagOf(data, 16, chunk)).toBe(expected);
  });
});
