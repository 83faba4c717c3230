import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { ChangeTokenExpiredError, InvalidArgumentError, type ChangeFeedCapability, type ContentConnector, type ItemChange, type ItemInfo } from '@gateway/connector-api';
import { sandbox } from '../support/fs-sandbox';
import { CHANGE_FEED_FIXTURES, type ChangeFeedEnvironment } from './change-fixtures';

/**
 * The `changeFeed` group (libs/connector-api/src/changes.ts) against every connector kind that offers
 * it (change-fixtures/<typeId>.fixture.ts): after a token, a creation, a content change, a rename, a
 * move and a deletion are each reported exactly once, in their end state; a token the source no longer
 * accepts is ChangeTokenExpiredError; a token the connector never issued is refused naming `token`.
 */

const actor = { username: 'change-feed-contract' };
const content = (text: string) => Readable.from([Buffer.from(text)]);

/** One whole pass from `token`: every change of every page, and the token the last page ends with. */
async function readPass(feed: ChangeFeedCapability, token: string): Promise<{ changes: ItemChange[]; pages: number; nextToken: string }> {
  const changes: ItemChange[] = [];
  let pages = 0;
  let nextToken = token;
  for await (const page of feed.changesSince(token)) {
    changes.push(...page.changes);
    nextToken = page.nextToken;
    pages++;
  }
  return { changes, pages, nextToken };
}

describe('Change feeds', () => {
  it('are left out by the connectors whose source has no change log (the filesystem re-lists)', async () => {
    const box = await sandbox();
    try {
      const connector: ContentConnector = box.connector;
      expect(connector.changeFeed).toBeUndefined();
    } finally {
      await box.cleanup();
    }
  });
});

describe.each(Object.values(CHANGE_FEED_FIXTURES))('Change feed contract: $typeId connector', (fixture) => {
  let env: ChangeFeedEnvironment;
  let feed: ChangeFeedCapability;
  let seq = 0;
  const unique = (stem: string) => `${stem}-${++seq}-${randomBytes(3).toString('hex')}.txt`;

  beforeAll(async () => {
    env = await fixture.setup();
    expect(env.connector.changeFeed).toBeDefined();
    feed = env.connector.changeFeed!;
  });

  afterAll(async () => {
    await env?.teardown();
  });

  async function folder(name: string): Promise<{ id: string; path: string }> {
    const folderPath = `${env.folderPath}/${name}`;
    return { id: await env.connector.folders!.createFolder(folderPath, actor), path: folderPath };
  }

  const file = (folderId: string, fileName: string, text: string) => env.connector.createFile({ folderId, fileName, content: content(text), mimeType: 'text/plain' }, actor);

  it('reports a creation, a content change, a rename, a move and a deletion after a token, each exactly once, as they end', async () => {
    const here = await folder(`feed-${randomBytes(3).toString('hex')}`);
    const elsewhere = await folder(`feed-target-${randomBytes(3).toString('hex')}`);
    const changedName = unique('changed');
    const changed = await file(here.id, changedName, 'first content');
    const before = await env.connector.getItem(changed);
    const renamed = await file(here.id, unique('renamed'), 'renamed');
    const movedName = unique('moved');
    const moved = await file(here.id, movedName, 'moved');
    const deleted = await file(here.id, unique('deleted'), 'deleted');
    const untouched = await file(here.id, unique('untouched'), 'untouched');

    const token = await feed.latestToken();
    const createdName = unique('created');
    const created = await file(here.id, createdName, 'created after the token');
    await env.connector.contentUpdate!.updateContent(changed, { content: content('second, longer content') }, actor);
    const newName = unique('new-name');
    await env.rename(renamed, newName);
    await env.move(moved, elsewhere.id);
    await env.connector.deleteItem(deleted, true, actor);

    const pass = await readPass(feed, token);
    const ours = new Set([created, changed, renamed, moved, deleted, untouched]);
    const reported = pass.changes.filter((c) => ours.has(c.id));
    const times = (id: string) => reported.filter((c) => c.id === id).length;
    expect({ created: times(created), changed: times(changed), renamed: times(renamed), moved: times(moved), deleted: times(deleted), untouched: times(untouched) }).toEqual({
      created: 1,
      changed: 1,
      renamed: 1,
      moved: 1,
      deleted: 1,
      untouched: 0,
    });
    const current = (id: string): ItemInfo => {
      const change = reported.find((c) => c.id === id);
      if (change?.kind !== 'current') throw new Error(`${id} was reported as ${change?.kind}`);
      return change.item;
    };
    expect(current(created)).toMatchObject({ id: created, name: createdName, path: `${here.path}/${createdName}`, baseType: 'document', size: Buffer.byteLength('created after the token') });
    expect(current(changed)).toMatchObject({ path: `${here.path}/${changedName}`, size: Buffer.byteLength('second, longer content') });
    expect(current(changed).etag).toBeDefined();
    expect(current(changed).etag).not.toBe(before.etag);
    expect(current(renamed)).toMatchObject({ name: newName, path: `${here.path}/${newName}` });
    expect(current(moved)).toMatchObject({ name: movedName, path: `${elsewhere.path}/${movedName}` });
    expect(reported.find((c) => c.id === deleted)).toEqual({ kind: 'deleted', id: deleted });
    // A source's own word on the change, where the driver keeps one, is the right one.
    const said = (id: string) => {
      const change = reported.find((c) => c.id === id);
      return change?.kind === 'current' ? change.reported : undefined;
    };
    expect([undefined, 'created']).toContain(said(created));
    expect([undefined, 'changed']).toContain(said(changed));
    expect([undefined, 'moved']).toContain(said(renamed));
    expect([undefined, 'moved']).toContain(said(moved));
    // What a change carries agrees with getItem on what a sync compares (path, size, etag).
    const now = await env.connector.getItem(changed);
    expect({ path: current(changed).path, size: current(changed).size, etag: current(changed).etag }).toEqual({ path: now.path, size: now.size, etag: now.etag });

    // The token the pass ended with reports none of it again.
    const after = await readPass(feed, pass.nextToken);
    expect(after.changes.filter((c) => ours.has(c.id))).toEqual([]);
  });

  it('hands out, on every page, a token from which the rest of the pass can be read again', async () => {
    const here = await folder(`pages-${randomBytes(3).toString('hex')}`);
    const token = await feed.latestToken();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(await file(here.id, unique('paged'), `paged ${i}`));
    const pages: Array<{ ids: string[]; nextToken: string }> = [];
    for await (const page of feed.changesSince(token)) pages.push({ ids: page.changes.map((c) => c.id).filter((id) => ids.has(id)), nextToken: page.nextToken });
    expect(pages.length).toBeGreaterThan(1);
    const first = pages.findIndex((p) => p.ids.length > 0);
    expect(first).toBeGreaterThanOrEqual(0);
    const rest = pages.slice(first + 1).flatMap((p) => p.ids);
    const resumed = (await readPass(feed, pages[first].nextToken)).changes.map((c) => c.id).filter((id) => ids.has(id));
    expect(resumed.sort()).toEqual(rest.sort());
  });

  it('refuses a token whose history the source dropped with ChangeTokenExpiredError, and starts again from latestToken()', async () => {
    const here = await folder(`expired-${randomBytes(3).toString('hex')}`);
    const token = await feed.latestToken();
    await file(here.id, unique('before-expiry'), 'before');
    await env.expireTokens();
    await expect(readPass(feed, token)).rejects.toBeInstanceOf(ChangeTokenExpiredError);
    await expect(readPass(feed, token)).rejects.toMatchObject({ kind: 'gone', code: 'CHANGE_TOKEN_EXPIRED' });
    const fresh = await feed.latestToken();
    const created = await file(here.id, unique('after-expiry'), 'after');
    expect((await readPass(feed, fresh)).changes.filter((c) => c.id === created)).toHaveLength(1);
  });

  it('refuses a token it never issued, naming the parameter', async () => {
    for (const token of ['', 'not a token', Buffer.from('https://elsewhere.example/v1.0/drives/x/root/delta?token=1').toString('base64url')]) {
      const error = await readPass(feed, token).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error).toMatchObject({ details: { parameter: 'token' } });
    }
  });
});
