import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { indexTargets, useSearchEngines, type IndexTarget } from '../contract/search-fixtures';
import type { SearchDocument } from '@gateway/connector-api';

/**
 * The index group of the three search connectors against the real engines: a fresh collection is
 * ensured, written, committed, and what was written is found through the gateway's select route with
 * the same answer on every engine; deletes, a second ensure, and a 1,000-document write in batches.
 */
const USER = { username: 'index-user', password: 'index-user-pass-1' };
const suffix = randomBytes(4).toString('hex');
const collection = `idx_${suffix}`;

const DOCS: SearchDocument[] = [
  { id: 'fs:/a.txt', title: 'Alpha report', name: 'a.txt', path: '/a.txt', mime_type: 'text/plain', size: 10, created: '2024-01-01T00:00:00.000Z', modified: '2024-01-02T00:00:00.000Z', author: 'ann', source_connector: 'fs', source_id: '/a.txt', content: 'quarterly numbers', acl_read: ['__everyone__'], prop_color: 'red' },
  { id: 'fs:/b.txt', title: 'Bravo notes', name: 'b.txt', path: '/b.txt', mime_type: 'text/plain', size: 20, created: '2024-02-01T00:00:00.000Z', modified: '2024-02-02T00:00:00.000Z', author: 'bob', source_connector: 'fs', source_id: '/b.txt', content: 'quarterly plans', acl_read: ['bob'] },
  { id: 'fs:/c.html', title: 'Charlie page', name: 'c.html', path: '/c.html', mime_type: 'text/html', size: 30, created: '2024-03-01T00:00:00.000Z', modified: '2024-03-02T00:00:00.000Z', author: 'ann', source_connector: 'fs', source_id: '/c.html', content: 'nothing to see', acl_read: ['__everyone__'] },
];

describe('Search index group on Solr, Elasticsearch and MongoDB (FerretDB)', () => {
  let gw: TestGateway;
  let configDir: string;
  let release: () => Promise<void>;
  let targets: IndexTarget[] = [];

  beforeAll(async () => {
    const used = await useSearchEngines();
    release = used.release;
    targets = indexTargets(used.engines, { idPrefix: 'index', collection, database: 'search_index' });
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-index-'));
    const connectors = targets.map((t) => t.definition);
    fs.writeFileSync(path.join(configDir, 'gateway.yaml'), stringify({ connectors }));
    gw = await startGateway({ env: { GATEWAY_CONFIG: path.join(configDir, 'gateway.yaml') } });
    await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...USER, roles: ['user'] }).expect(201);
  }, 300_000);

  afterAll(async () => {
    await gw?.close();
    for (const t of targets) await t.connector.close().catch(() => undefined);
    await release?.();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  const select = (name: string, collection: string, query: string) =>
    gw.http().get(`${gw.api}/search/index-${name}/${collection}/select?${query}`).set('Authorization', basic(USER.username, USER.password));

  it('ensures a fresh collection, writes, commits, finds, deletes; the same answers on every engine', async () => {
    const answers: Record<string, unknown>[] = [];
    for (const { name, collection, connector } of targets) {
      await connector.index.ensureCollection(collection);
      await connector.index.ensureCollection(collection); // a second ensure changes nothing and does not fail
      await connector.index.write(collection, DOCS);
      await connector.index.commit(collection);
      const found = await select(name, collection, 'q=content:quarterly&sort=id%20asc&fl=id,title,author,size,created,acl_read').expect(200);
      expect(found.body.results.numFound).toBe(2);
      expect(found.body.results.docs.map((d: { id: string }) => d.id)).toEqual(['fs:/a.txt', 'fs:/b.txt']);
      const facets = await select(name, collection, 'q=*:*&rows=0&facet=true&facet.field=author').expect(200);
      expect(facets.body.results.facets.author).toEqual([{ value: 'ann', count: 2 }, { value: 'bob', count: 1 }]);
      answers.push(found.body.results);

      await connector.index.delete(collection, ['fs:/b.txt']);
      await connector.index.commit(collection);
      const after = await select(name, collection, 'q=content:quarterly&sort=id%20asc').expect(200);
      expect(after.body.results.docs.map((d: { id: string }) => d.id)).toEqual(['fs:/a.txt']);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  }, 300_000);

  it('writes 1,000 documents in batches of 200, all found', async () => {
    for (const { name, collection, connector } of targets) {
      const many = Array.from({ length: 1000 }, (_, i) => ({ id: `bulk:${i}`, title: `bulk ${i}`, author: 'bulk', size: i, source_connector: 'bulk', source_id: String(i) }));
      for (let i = 0; i < many.length; i += 200) await connector.index.write(collection, many.slice(i, i + 200));
      await connector.index.commit(collection);
      const res = await select(name, collection, 'q=author:bulk&rows=0').expect(200);
      expect(res.body.results.numFound).toBe(1000);
    }
  }, 300_000);

  it('writing ids again replaces those documents, also when two writes of the same new ids race', async () => {
    for (const { name, collection, connector } of targets) {
      await connector.index.write(collection, [
        { id: 'again:1', title: 'first', author: 'again' },
        { id: 'again:2', title: 'first', author: 'again' },
      ]);
      await connector.index.write(collection, [
        { id: 'again:1', title: 'second', author: 'again' },
        { id: 'again:3', title: 'second', author: 'again' },
      ]);
      const racing = Array.from({ length: 50 }, (_, i) => ({ id: `race:${i}`, title: 'raced', author: 'race' }));
      await Promise.all([connector.index.write(collection, racing), connector.index.write(collection, racing)]);
      await connector.index.commit(collection);
      const again = await select(name, collection, 'q=author:again&sort=id%20asc&fl=id,title').expect(200);
      expect(again.body.results.docs.map((d: { id: string; title: string }) => [d.id, d.title])).toEqual([
        ['again:1', 'second'],
        ['again:2', 'first'],
        ['again:3', 'second'],
      ]);
      expect((await select(name, collection, 'q=author:race&rows=0').expect(200)).body.results.numFound).toBe(50);
    }
  }, 300_000);

  it('names the refused document', async () => {
    for (const { name, collection, connector } of targets) {
      if (name === 'mongodb') continue; // MongoDB has no typed fields: it stores any value.
      await expect(connector.index.write(collection, [{ id: 'bad:1', size: 'not a number' }])).rejects.toThrow(/bad:1/);
    }
  }, 120_000);
});
