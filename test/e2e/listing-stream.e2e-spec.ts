import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ItemInfo } from '@gateway/connector-api';
import { encodeId } from '@gateway/connector-filesystem';
import { adminAuth, startGateway, type TestGateway } from '../support/gateway';
import { connector, listen, rawGet, readAll } from '../support/files';

/**
 * folderitems without `limit` streams the folder (issue 16: memory flat whatever the folder
 * size). What a client sees must not change: the same envelope and entries, in the same order,
 * as the pages of the same folder put together; request errors still answered whole; a failure
 * after the answer started cuts the connection instead of closing the JSON early.
 */
const FILES = 2_345; // more than two of the batches the service asks the connector for

describe('Streamed folder listings', () => {
  let gw: TestGateway;
  let folderId: string;

  beforeAll(async () => {
    gw = await startGateway();
    const folder = path.join(gw.dataDir, 'repository', 'big');
    fs.mkdirSync(path.join(folder, 'sub'), { recursive: true });
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(folder, `doc-${String(i).padStart(5, '0')}.txt`), `document ${i}\n`);
    const res = await gw.http().get(`${gw.api}/repo/fs/idbypath`).query({ folderPath: '/', fileName: 'big' }).set('Authorization', adminAuth()).expect(200);
    folderId = res.body.results.id;
  });
  afterAll(() => gw?.close());

  it('answers the whole folder as the pages put together, in one envelope of JSON', async () => {
    const whole = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: folderId }).set('Authorization', adminAuth()).expect(200);
    expect(whole.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(whole.headers['x-next-cursor']).toBeUndefined();
    expect(Object.keys(whole.body)).toEqual(['success', 'results']);
    expect(whole.body.success).toBe(true);

    const paged: Array<[string, unknown]> = [];
    let cursor: string | undefined;
    do {
      const res = await gw
        .http()
        .get(`${gw.api}/repo/fs/folderitems`)
        .query({ id: folderId, limit: 700, ...(cursor ? { cursor } : {}) })
        .set('Authorization', adminAuth())
        .expect(200);
      paged.push(...Object.entries(res.body.results));
      cursor = res.headers['x-next-cursor'];
    } while (cursor);

    expect(Object.entries(whole.body.results)).toEqual(paged);
    expect(paged).toHaveLength(FILES + 1);
    expect(whole.body.results['/big/sub']).toMatchObject({ BaseType: 'folder', Name: 'sub' });
    expect(whole.body.results['/big/doc-01234.txt']).toMatchObject({ BaseType: 'document', ContentLength: String('document 1234\n'.length) });
  });

  it('streams the rest of the folder from a cursor', async () => {
    const first = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: folderId, limit: 2000 }).set('Authorization', adminAuth()).expect(200);
    const rest = await gw
      .http()
      .get(`${gw.api}/repo/fs/folderitems`)
      .query({ id: folderId, cursor: first.headers['x-next-cursor'] })
      .set('Authorization', adminAuth())
      .expect(200);
    const keys = Object.keys(rest.body.results);
    expect(keys).toHaveLength(FILES + 1 - 2000);
    expect(keys[0] > Object.keys(first.body.results).at(-1)!).toBe(true);
    expect(rest.headers['x-next-cursor']).toBeUndefined();
  });

  it('answers an empty folder as an empty object', async () => {
    const res = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: (await subId()) }).set('Authorization', adminAuth()).expect(200);
    expect(res.body).toEqual({ success: true, results: {} });
  });

  it('answers errors about the request whole, through the error envelope', async () => {
    const missing = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: encodeId('nowhere/at-all') }).set('Authorization', adminAuth());
    expect(missing.status).toBe(404);
    expect(missing.body.success).toBe(false);
    const badCursor = await gw.http().get(`${gw.api}/repo/fs/folderitems`).query({ id: folderId, cursor: '!!' }).set('Authorization', adminAuth());
    expect(badCursor.status).toBe(400);
    expect(JSON.stringify(badCursor.body)).toContain('cursor');
  });

  it('cuts the connection when the listing fails after the answer started, never a well-formed short JSON', async () => {
    const driver = connector(gw);
    const original = driver.folderBatches!.bind(driver);
    driver.folderBatches = async function* (id, options): AsyncGenerator<ItemInfo[]> {
      let n = 0;
      for await (const batch of original(id, options)) {
        if (n++ === 1) throw new Error('disk went away in the middle of the folder');
        yield batch;
      }
    };
    try {
      const base = await listen(gw);
      const res = await rawGet(`${base}${gw.api}/repo/fs/folderitems?id=${folderId}`, { Authorization: adminAuth() });
      expect(res.statusCode).toBe(200);
      const outcome = await readAll(res).then(
        (body) => ({ ended: true, body: body.toString() }),
        (error: Error) => ({ ended: false, error: error.message }),
      );
      // Either the read fails (the connection was cut) or what arrived is not a whole JSON document.
      if (outcome.ended) expect(() => JSON.parse((outcome as { body: string }).body)).toThrow();
      expect(outcome).toMatchObject({ ended: false });
    } finally {
      driver.folderBatches = original;
    }
  });

  async function subId(): Promise<string> {
    const res = await gw.http().get(`${gw.api}/repo/fs/idbypath`).query({ folderPath: '/big', fileName: 'sub' }).set('Authorization', adminAuth()).expect(200);
    return res.body.results.id;
  }
});
