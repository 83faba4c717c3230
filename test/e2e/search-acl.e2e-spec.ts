import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { ADMIN, adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { indexTargets, useSearchEngines, type IndexTarget } from '../contract/search-fixtures';
import type { SearchDocument } from '@gateway/connector-api';

/**
 * Permission-trimmed search (issue 14) on Solr, Elasticsearch and MongoDB (FerretDB): documents with
 * acl_read values written through the index group; alice and bob (with groups, one from the config
 * file's users) see exactly theirs through select and raw queries; raw bodies that try to widen the
 * answer stay trimmed or are refused; an admin sees all only with acl=false, which others may not use.
 */
const ALICE = { username: 'alice', password: 'alice-password-1', groups: ['finance'] };
const BOB = { username: 'bob', password: 'bob-password-1', groups: ['staff'] };
/** Declared in the configuration file with a group. */
const CAROL = { username: 'carol', password: 'carol-password-1', groups: ['finance', 'staff'] };
const suffix = randomBytes(4).toString('hex');
const collection = `acl_${suffix}`;

const doc = (id: string, acl: string[], author: string): SearchDocument => ({
  id,
  title: `document ${id}`,
  content: 'shared words',
  author,
  source_connector: 'acl',
  source_id: id,
  acl_read: acl,
});
const DOCS: SearchDocument[] = [
  doc('d1-alice', ['alice'], 'ann'),
  doc('d2-bob', ['bob'], 'ben'),
  doc('d3-everyone', ['__everyone__'], 'ann'),
  doc('d4-finance', ['finance'], 'ann'),
  doc('d5-staff', ['staff', 'someone'], 'ben'),
  doc('d6-nobody', ['nobody'], 'cid'),
  doc('d7-none', [], 'cid'),
];
const ALL = DOCS.map((d) => d.id).sort();
const SEES: Record<string, string[]> = {
  alice: ['d1-alice', 'd3-everyone', 'd4-finance'],
  bob: ['d2-bob', 'd3-everyone', 'd5-staff'],
  carol: ['d3-everyone', 'd4-finance', 'd5-staff'],
  [ADMIN.username]: ['d3-everyone'],
};

type Who = { username: string; password: string };
const ids = (docs: { id?: unknown; _id?: unknown }[]) => docs.map((d) => String(d.id ?? d._id)).sort();

describe('Permission-trimmed search on Solr, Elasticsearch and MongoDB (FerretDB)', () => {
  let gw: TestGateway;
  let configDir: string;
  let release: () => Promise<void>;
  let targets: IndexTarget[] = [];

  beforeAll(async () => {
    const used = await useSearchEngines();
    release = used.release;
    targets = indexTargets(used.engines, { idPrefix: 'acl', collection, database: 'search_acl', params: { aclTrimming: true } });
    for (const { connector } of targets) {
      await connector.index.ensureCollection(collection);
      await connector.index.write(collection, DOCS);
      await connector.index.commit(collection);
    }
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-acl-'));
    const connectors = targets.map((t) => t.definition);
    fs.writeFileSync(path.join(configDir, 'gateway.yaml'), stringify({ connectors, users: [{ ...CAROL, roles: ['user'] }] }));
    gw = await startGateway({ env: { GATEWAY_CONFIG: path.join(configDir, 'gateway.yaml') } });
    for (const user of [ALICE, BOB]) {
      await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...user, roles: ['user'] }).expect(201);
    }
  }, 300_000);

  afterAll(async () => {
    await gw?.close();
    for (const t of targets) await t.connector.close().catch(() => undefined);
    await release?.();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  const select = (name: string, who: Who, query: string) =>
    gw.http().get(`${gw.api}/search/acl-${name}/select?${query}`).set('Authorization', basic(who.username, who.password));
  const raw = (name: string, who: Who, body: unknown, acl?: string) =>
    gw.http().post(`${gw.api}/search/acl-${name}/query${acl ? `?acl=${acl}` : ''}`).set('Authorization', basic(who.username, who.password)).send(body as object);

  /** The ids a raw query answered, whatever the engine's answer shape. */
  function rawIds(name: string, results: unknown): string[] {
    if (name === 'solr') return ids((results as { response: { docs: { id: string }[] } }).response.docs);
    if (name === 'elasticsearch' || name === 'opensearch') return ids((results as { hits: { hits: { _id: string }[] } }).hits.hits);
    return ids(results as { _id: string }[]);
  }
  /** A match-everything raw query in each engine's own form. */
  const EVERYTHING: Record<string, unknown> = {
    solr: { query: '*:*', limit: 100 },
    elasticsearch: { query: { match_all: {} }, size: 100 },
    opensearch: { query: { match_all: {} }, size: 100 },
    mongodb: { filter: {}, limit: 100 },
  };

  it('lists users with their groups, the config file\'s user included', async () => {
    const res = await gw.http().get(`${gw.api}/admin/users`).set('Authorization', adminAuth()).expect(200);
    const groups = Object.fromEntries(res.body.results.map((u: { username: string; groups: string[] }) => [u.username, u.groups]));
    expect(groups).toMatchObject({ alice: ['finance'], bob: ['staff'], carol: ['finance', 'staff'], [ADMIN.username]: [] });
  });

  it('refuses bad groups with 400 naming groups, and changes nothing', async () => {
    for (const groups of [['__everyone__'], ['a,b'], 'staff', [''], Array.from({ length: 65 }, (_, i) => `g${i}`), ['x', 'x'], [7]]) {
      const created = await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ username: 'dave', password: 'dave-password-1', roles: ['user'], groups });
      expect(created.status).toBe(400);
      expect(created.body.error.parameter).toBe('groups');
      const patched = await gw.http().patch(`${gw.api}/admin/users/bob`).set('Authorization', adminAuth()).send({ groups });
      expect(patched.status).toBe(400);
      expect(patched.body.error.parameter).toBe('groups');
    }
    const res = await gw.http().get(`${gw.api}/admin/users`).set('Authorization', adminAuth()).expect(200);
    expect(res.body.results.map((u: { username: string }) => u.username)).not.toContain('dave');
    expect(res.body.results.find((u: { username: string }) => u.username === 'bob').groups).toEqual(['staff']);
  });

  it('answers each caller exactly the documents of their name, __everyone__ and their groups, in select and raw query', async () => {
    for (const { name } of targets) {
      for (const who of [ALICE, BOB, CAROL, ADMIN]) {
        const found = await select(name, who, 'q=*:*&rows=100&fl=id').expect(200);
        expect({ name, who: who.username, ids: ids(found.body.results.docs) }).toEqual({ name, who: who.username, ids: SEES[who.username] });
        expect(found.body.results.numFound).toBe(SEES[who.username].length);
        const rawAnswer = await raw(name, who, EVERYTHING[name]).expect(200);
        expect({ name, who: who.username, ids: rawIds(name, rawAnswer.body.results) }).toEqual({ name, who: who.username, ids: SEES[who.username] });
      }
    }
  }, 120_000);

  it('counts facets over the caller\'s documents only, sorted pages included', async () => {
    for (const { name } of targets) {
      const facets = await select(name, BOB, 'q=*:*&rows=0&facet=true&facet.field=author,acl_read').expect(200);
      expect(facets.body.results.facets.author).toEqual([{ value: 'ben', count: 2 }, { value: 'ann', count: 1 }]);
      expect(facets.body.results.facets.acl_read.map((b: { value: string }) => b.value).sort()).toEqual(['__everyone__', 'bob', 'someone', 'staff']);
      // An ascending sort takes MongoDB's two-part path (documents with a value, then without).
      const sorted = await select(name, ALICE, 'q=*:*&rows=100&fl=id&sort=author%20asc').expect(200);
      expect(ids(sorted.body.results.docs)).toEqual(SEES.alice);
      // A user fq on acl_read narrows inside the trimming, never past it.
      const narrowed = await select(name, ALICE, 'q=*:*&rows=100&fl=id&facet.field=acl_read&fq=acl_read:bob').expect(200);
      expect(narrowed.body.results.numFound).toBe(0);
    }
  }, 120_000);

  it('an admin sees all only with acl=false; acl=false from anyone else is 403', async () => {
    for (const { name } of targets) {
      const all = await select(name, ADMIN, 'q=*:*&rows=100&fl=id&acl=false').expect(200);
      expect(ids(all.body.results.docs)).toEqual(ALL);
      const allRaw = await raw(name, ADMIN, EVERYTHING[name], 'false').expect(200);
      expect(rawIds(name, allRaw.body.results)).toEqual(ALL);
      const trimmed = await raw(name, ADMIN, EVERYTHING[name], 'true').expect(200);
      expect(rawIds(name, trimmed.body.results)).toEqual(SEES[ADMIN.username]);
      for (const who of [ALICE, BOB]) {
        const refused = await select(name, who, 'q=*:*&acl=false');
        expect(refused.status).toBe(403);
        expect(refused.body.success).toBe(false);
        expect((await raw(name, who, EVERYTHING[name], 'false')).status).toBe(403);
      }
      const bad = await select(name, ADMIN, 'q=*:*&acl=off').expect(400);
      expect(bad.body.error.parameter).toBe('acl');
    }
  }, 120_000);

  it('raw queries that try to widen the answer stay trimmed', async () => {
    const queryDsl = [
      { query: { bool: { should: [{ match_all: {} }, { terms: { acl_read: ['bob', 'nobody'] } }] } }, size: 100 },
      { query: { match_all: {} }, post_filter: { match_all: {} }, size: 100 },
      { query: { bool: { must_not: [{ terms: { acl_read: ['__everyone__'] } }] } }, size: 100 },
    ];
    const attempts: Record<string, unknown[]> = {
      solr: [
        { query: '*:*', filter: ['*:*'], limit: 100 },
        { params: { q: '*:*', fq: ['acl_read:alice OR *:*'], rows: 100 } },
        { query: 'acl_read:bob OR acl_read:nobody OR *:*', limit: 100 },
        { params: { q: '*:*', rows: 100, facet: 'true', 'facet.field': 'acl_read', 'facet.query': '*:*' } },
      ],
      elasticsearch: queryDsl,
      opensearch: queryDsl,
      mongodb: [
        { filter: { $or: [{ acl_read: { $exists: true } }, { id: { $exists: true } }] }, limit: 100 },
        { filter: { $nor: [{ acl_read: 'alice' }] }, limit: 100 },
        { filter: { acl_read: { $in: ['bob', 'nobody', 'finance'] } }, limit: 100 },
      ],
    };
    for (const { name } of targets) {
      for (const body of attempts[name]) {
        const res = await raw(name, BOB, body).expect(200);
        const seen = rawIds(name, res.body.results);
        expect({ name, body, extra: seen.filter((id) => !SEES.bob.includes(id)) }).toEqual({ name, body, extra: [] });
      }
    }
    // Facet counts and aggregations in a raw query run over the trimmed documents too.
    const solrFacets = await raw('solr', BOB, { params: { q: '*:*', rows: 0, facet: 'true', 'facet.field': 'author', 'facet.mincount': 1 } }).expect(200);
    expect(solrFacets.body.results.facet_counts.facet_fields.author).toEqual(['ben', 2, 'ann', 1]);
    for (const name of ['elasticsearch', 'opensearch']) {
      const aggs = await raw(name, BOB, { size: 0, aggs: { authors: { terms: { field: 'author' } } }, track_total_hits: true }).expect(200);
      expect(aggs.body.results.hits.total.value).toBe(3);
      expect(aggs.body.results.aggregations.authors.buckets).toEqual([{ key: 'ben', doc_count: 2 }, { key: 'ann', doc_count: 1 }]);
    }
  }, 120_000);

  it('refuses the raw constructs that would answer past the trimming', async () => {
    const refused: [string, unknown][] = [
      ['solr', { query: '*:*', facet: { all: { type: 'terms', field: 'author', domain: { query: '*:*' } } } }],
      ['solr', { params: { q: '*:*', fq: '{!terms f=acl_read}bob,nobody' } }],
      ['solr', { params: { q: '*:*', 'json.facet': '{all:{type:terms,field:author,domain:{query:"*:*"}}}' } }],
      ['solr', { params: { q: '*:*', terms: 'true', 'terms.fl': 'acl_read' } }],
      ['solr', { params: { q: '*:*', expand: 'true', 'expand.fq': '*:*' } }],
      ['solr', { params: { q: '*:*', fl: 'id,all:[subquery]', 'all.q': '*:*' } }],
      ['solr', { params: { q: 'id:d2-bob', debugQuery: 'true', explainOther: '*:*' } }],
      ['elasticsearch', { size: 0, aggs: { all: { global: {}, aggs: { authors: { terms: { field: 'author' } } } } } }],
      ['elasticsearch', { suggest: { s: { text: 'shared', term: { field: 'content' } } } }],
      ['elasticsearch', { size: 0, aggs: { s: { significant_terms: { field: 'author' } } } }],
      ['elasticsearch', { knn: { field: 'v', query_vector: [1], k: 1, num_candidates: 1 } }],
      ['opensearch', { size: 0, aggs: { all: { global: {}, aggs: { authors: { terms: { field: 'author' } } } } } }],
      ['opensearch', { suggest: { s: { text: 'shared', term: { field: 'content' } } } }],
      ['opensearch', { size: 0, aggs: { s: { significant_terms: { field: 'author' } } } }],
      ['opensearch', { query: { match_all: {} }, search_pipeline: { request_processors: [{ filter_query: { query: { match_all: {} } } }] } }],
      ['opensearch', { query: { wrapper: { query: Buffer.from('{"match_all":{}}').toString('base64') } } }],
      ['mongodb', { filter: {}, pipeline: [{ $unionWith: { coll: `acl_${suffix}` } }] }],
      ['mongodb', { filter: { $where: 'true' } }],
    ];
    for (const [name, body] of refused) {
      const res = await raw(name, BOB, body);
      expect({ name, body, status: res.status }).toEqual({ name, body, status: 400 });
      expect(res.body.error.parameter).toEqual(expect.any(String));
    }
  }, 120_000);

  it('sees a change of groups at once, cached credentials included', async () => {
    for (const { name } of targets) await select(name, BOB, 'q=*:*&rows=100&fl=id').expect(200);
    await gw.http().patch(`${gw.api}/admin/users/bob`).set('Authorization', adminAuth()).send({ groups: ['staff', 'finance'] }).expect(200);
    for (const { name } of targets) {
      const found = await select(name, BOB, 'q=*:*&rows=100&fl=id').expect(200);
      expect(ids(found.body.results.docs)).toEqual(['d2-bob', 'd3-everyone', 'd4-finance', 'd5-staff']);
    }
    await gw.http().patch(`${gw.api}/admin/users/bob`).set('Authorization', adminAuth()).send({ groups: [] }).expect(200);
    for (const { name } of targets) {
      const found = await select(name, BOB, 'q=*:*&rows=100&fl=id').expect(200);
      expect(ids(found.body.results.docs)).toEqual(['d2-bob', 'd3-everyone']);
    }
  }, 120_000);
});
