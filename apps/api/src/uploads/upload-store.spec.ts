import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { Upload } from '@tus/server';
import { InvalidArgumentError } from '@gateway/errors';
import { ChecksumMismatch, declaredChecksum, GatewayUploadStore } from './upload-store';
import { parseChecksum } from './uploads.service';

const digest = (algorithm: string, text: string) => createHash(algorithm).update(text).digest('base64');

describe('GatewayUploadStore', () => {
  let dir: string;
  let store: GatewayUploadStore;
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'upload-store-'));
    store = new GatewayUploadStore(dir, 3_600_000);
    await store.create(new Upload({ id: 'u1', size: 10, offset: 0, metadata: { 'gateway-owner': 'alice', filename: 'a.txt' } }));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('offers checksum and not creation-defer-length', () => {
    expect(store.extensions).toEqual(['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum']);
  });

  it('appends a body that matches its checksum', async () => {
    const end = await declaredChecksum.run({ algorithm: 'sha256', digest: digest('sha256', 'hello') }, () => store.write(Readable.from([Buffer.from('hel'), Buffer.from('lo')]), 'u1', 0));
    expect(end).toBe(5);
    expect((await store.find('u1'))?.offset).toBe(5);
  });

  it('cuts a mismatching body off again and answers 460, leaving the earlier bytes', async () => {
    await store.write(Readable.from([Buffer.from('abc')]), 'u1', 0);
    const write = declaredChecksum.run({ algorithm: 'sha1', digest: digest('sha1', 'other') }, () => store.write(Readable.from([Buffer.from('defg')]), 'u1', 3));
    await expect(write).rejects.toBeInstanceOf(ChecksumMismatch);
    await expect(write).rejects.toMatchObject({ status_code: 460 });
    expect(fs.readFileSync(path.join(dir, 'u1'), 'utf8')).toBe('abc');
  });

  it('finds an upload with its owner, metadata and offset; discards it whole', async () => {
    expect(await store.find('u1')).toMatchObject({ id: 'u1', owner: 'alice', size: 10, offset: 0, metadata: { filename: 'a.txt' } });
    expect(await store.ids()).toEqual(['u1']);
    expect(await store.ids('x')).toEqual([]);
    await store.discard('u1');
    expect(await store.find('u1')).toBeUndefined();
    expect(fs.readdirSync(dir)).toEqual([]);
    await store.discard('u1');
  });
});

describe('parseChecksum', () => {
  it('reads `<algorithm> <base64>`', () => {
    expect(parseChecksum(undefined)).toBeUndefined();
    expect(parseChecksum('SHA256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=')).toEqual({ algorithm: 'sha256', digest: '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' });
  });

  it.each(['md5 AAAA', 'sha256', 'sha256 not base64!', ''])('refuses %p naming Upload-Checksum', (header) => {
    expect(() => parseChecksum(header)).toThrow(InvalidArgumentError);
    try {
      parseChecksum(header);
    } catch (e) {
      expect((e as InvalidArgumentError).parameter).toBe('Upload-Checksum');
    }
  });
});
