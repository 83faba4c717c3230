import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { adminAuth, basic, startGateway, type TestGateway } from '../support/gateway';
import { freePort } from '../engines/engines';
import {

  CORPUS_SIZE,
  SEARCH_FIXTURES,
  generateCorpus,
  useSearchEngines,
  type SearchEnvironment,
} from './search-fixtures';

/**
 * Content search (spec 4.6) through HTTP against the real engines: the same
 * corpus loaded into every search fixture, the same select requests, the
 * same answers (numFound, ids in order, facet buckets, documents). Then the
 * query route, collection rules, engine errors, and engines that are down or
 * never answer. Search connectors come from search-fixtures/index.ts only.
 */

const USER = { username: 'search-user', password: 'search-user-pass-1' };
const user = () => basic(USER.username, USER.password);

/** [title, query string]. Sorted by id wherever relevance could order differently. */
const SELECTS: [string, string][] = [
  ['all documents, default paging', 'q=*:*'],
  ['all documents sorted by id desc', 'q=*:*&sort=id desc'],
  ['one word in content (default field)', 'q=report&sort=id asc&rows=50'],
  ['one word, field named', 'q=content:budget&sort=id asc&rows=50'],
  ['a word in title, case-insensitive', 'q=title:Alpha&sort=id asc&rows=50'],
  ['a word written in capitals', 'q=title:ALPHA&sort=id asc&rows=50'],
  ['a phrase', 'q=content:"alpha bravo"&sort=id asc&rows=50'],
  ['a phrase in title', 'q=title:"river mountain"&sort=id asc&rows=50'],
  ['AND', 'q=content:alpha AND content:bravo&sort=id asc&rows=50'],
  ['OR', 'q=title:winter OR title:summer&sort=id asc&rows=50'],
  ['NOT', 'q=*:* NOT author:alice&sort=id asc&rows=50'],
  ['+ and -', 'q=+content:delta -content:echo&sort=id asc&rows=50'],
  ['juxtaposition is OR', 'q=title:golf title:hotel&sort=id asc&rows=50'],
  ['grouping', 'q=(title:kilo OR title:lima) AND author:bob&sort=id asc&rows=50'],
  ['keyword exact value', 'q=author:carol&sort=id asc&rows=100'],
  ['keyword with a slash', 'q=mime_type:application/pdf&sort=id asc&rows=100'],
  ['multi-valued keyword', 'q=tags:urgent&sort=id asc&rows=100'],
  ['keyword prefix', 'q=author:gr*&sort=id asc&rows=100'],
  ['word prefix', 'q=title:mou*&sort=id asc&rows=100'],
  ['field exists (tags)', 'q=tags:*&sort=id asc&rows=5'],
  ['field missing (no tags)', 'q=*:* -tags:*&sort=id asc&rows=100'],
  ['number range', 'q=size:[1000 TO 5000]&sort=id asc&rows=100'],
  ['open number range', 'q=size:[90000 TO *]&sort=id asc&rows=100'],
  ['date range', 'q=created:[2021-01-01T00:00:00Z TO 2021-06-30T23:59:59Z]&sort=id asc&rows=100'],
  ['no match', 'q=content:nosuchword'],
  ['fl limits the fields', 'q=author:dave&fl=title,size&sort=id asc&rows=20'],
  ['fl with dates and arrays', 'q=author:erin&fl=id,created,tags&sort=id asc&rows=20'],
  ['facets on one field', 'q=*:*&facet=true&facet.field=mime_type&rows=0'],
  ['facets on a multi-valued field', 'q=*:*&facet=true&facet.field=tags&rows=0'],
  ['facets on two fields with a query', 'q=content:alpha&facet=true&facet.field=author,tags&rows=0'],
  ['facets limited', 'q=*:*&facet=true&facet.field=author&facet.limit=3&rows=0'],
  ['fq on a facet field', 'q=*:*&facet=true&facet.field=mime_type&fq=mime_type:text/plain&sort=id asc&rows=30'],
  ['two fq', 'q=*:*&facet=true&facet.field=author,tags&fq=author:frank&fq=tags:legal&sort=id asc&rows=30'],
  ['fq with OR grouping', 'q=*:*&facet=true&facet.field=author&fq=author:((alice) OR (bob))&sort=id asc&rows=30'],
  ['fq number range', 'q=content:summer&facet=true&facet.field=size,author&fq=size:[0 TO 20000]&sort=id asc&rows=30'],
  ['fq date range', 'q=*:*&facet=true&facet.field=created,mime_type&fq=created:[2023-01-01T00:00:00Z TO *]&sort=id asc&rows=30'],
  ['facets follow the filters', 'q=*:*&facet=true&facet.field=tags,author&fq=tags:final&rows=0'],
  ['paging: second page', 'q=*:*&sort=id asc&start=10&rows=10'],
  ['paging: past the end', 'q=author:heidi&sort=id asc&start=1000&rows=10'],
  ['paging: last partial page', 'q=author:heidi&sort=id asc&start=50&rows=100'],
  ['rows=0 counts only', 'q=content:tango&rows=0'],
  ['sort by size desc', 'q=*:*&sort=size desc&rows=25'],
  ['sort by created asc', 'q=author:grace&sort=created asc&rows=25'],
  ['sort by two fields', 'q=*:*&sort=author asc,size desc&rows=40'],
  ['sort by a keyword then id', 'q=tags:review&sort=mime_type desc&rows=40'],
  ['everything at once', 'q=content:alpha OR title:report&fl=id,author,size&facet=true&facet.field=author,mime_type&fq=mime_type:text/html&sort=size asc&start=2&rows=7'],
];

/**
 * Answers written out by hand from the seeded corpus (generateCorpus() with its default seed), so a bug every
 * engine shares fails too: the exact numFound, ids in order and facet buckets. Each case has documents that
 * nearly match (noted beside it), so a looser reading of the query fails.
 */
interface ExpectedAnswer {
  title: string;
  query: string;
  numFound: number;
  ids: string[];
  facets?: Record<string, { value: string; count: number }[]>;
}
const EXPECTED_ANSWERS: ExpectedAnswer[] = [
  // 45 titles hold "juliet" (some as "Juliet"); the first five by id.
  { title: 'a term', query: 'q=title:juliet&sort=id asc&rows=5', numFound: 45, ids: ['doc-0015', 'doc-0017', 'doc-0037', 'doc-0042', 'doc-0072'] },
  // Six titles hold both words; only these two have "river" right before "mountain" (doc-0075 "echo mountain river" does not).
  { title: 'a phrase', query: 'q=title:"river mountain"&sort=id asc&rows=50', numFound: 2, ids: ['doc-0350', 'doc-0371'] },
  // Five titles hold kilo and lima; doc-0263 and doc-0514 are grace's.
  { title: 'a boolean AND and NOT', query: 'q=title:kilo AND title:lima NOT author:grace&sort=id asc&rows=50', numFound: 3, ids: ['doc-0011', 'doc-0058', 'doc-0464'] },
  // Bounds included: doc-0275 is 1339, doc-0147 is 1856; doc-0038 (1909) is the next size above.
  { title: 'a number range, bounds included', query: 'q=size:[1339 TO 1856]&sort=id asc&rows=50', numFound: 4, ids: ['doc-0147', 'doc-0199', 'doc-0275', 'doc-0409'] },
  // Bounds included: doc-0394 at 03:24:59, doc-0399 at 15:34:57 (first days of January 2021).
  {
    title: 'a date range, bounds included',
    query: 'q=created:[2021-01-01T03:24:59Z TO 2021-01-05T15:34:57Z]&sort=id asc&rows=50',
    numFound: 5,
    ids: ['doc-0056', 'doc-0309', 'doc-0327', 'doc-0394', 'doc-0399'],
  },
  // Carol has ten documents tagged legal; three of them are PDFs.
  {
    title: 'field matches (keyword, multi-valued, with a slash)',
    query: 'q=author:carol AND tags:legal AND mime_type:application/pdf&sort=id asc&rows=50',
    numFound: 3,
    ids: ['doc-0005', 'doc-0069', 'doc-0417'],
  },
  {
    title: 'facet counts over the whole corpus',
    query: 'q=*:*&facet=true&facet.field=mime_type&rows=0',
    numFound: 520,
    ids: [],
    facets: {
      mime_type: [
        { value: 'image/png', count: 111 },
        { value: 'application/msword', count: 105 },
        { value: 'text/plain', count: 104 },
        { value: 'text/html', count: 102 },
        { value: 'application/pdf', count: 98 },
      ],
    },
  },
  // Heidi's 60 documents; draft and hr tie at 10 (ordered by value).
  {
    title: 'facet counts of the documents a query matches',
    query: 'q=author:heidi&facet=true&facet.field=tags&rows=0',
    numFound: 60,
    ids: [],
    facets: {
      tags: [
        { value: 'urgent', count: 13 },
        { value: 'public', count: 11 },
        { value: 'draft', count: 10 },
        { value: 'hr', count: 10 },
        { value: 'final', count: 9 },
        { value: 'archive', count: 8 },
        { value: 'internal', count: 8 },
        { value: 'legal', count: 7 },
        { value: 'finance', count: 5 },
        { value: 'review', count: 4 },
      ],
    },
  },
];

interface Connection {
  name: string;
  env: SearchEnvironment;
}

describe('Search contract: every search connector answers alike', () => {
  let gw: TestGateway;
  let configDir: string;
  let release: () => Promise<void>;
  const connections: Connection[] = [];
  const corpus = generateCorpus();

  beforeAll(async () => {
    const used = await useSearchEngines();
    release = used.release;
    for (const fixture of SEARCH_FIXTURES) connections.push({ name: fixture.name, env: await fixture.setup(used.engines, corpus) });
    configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'search-contract-'));
    const connectors = connections.flatMap(({ name, env }) => {
      const typeId = SEARCH_FIXTURES.find((f) => f.name === name)!.typeId;
      const { collection: _collection, ...withoutCollection } = env.params;
      return [
        { id: `search-${name}`, typeId, description: `Search contract (${name})`, params: env.params },
        { id: `search-${name}-nocoll`, typeId, description: `Search contract (${name}, no collection)`, params: withoutCollection },
      ];
    });
    connectors.push({ id: 'files', typeId: 'filesystem', description: 'Content only', params: { root: configDir } });
    fs.writeFileSync(path.join(configDir, 'gateway.yaml'), stringify({ connectors }));
    gw = await startGateway({ env: { GATEWAY_CONFIG: path.join(configDir, 'gateway.yaml') } });
    await gw.http().post(`${gw.api}/admin/users`).set('Authorization', adminAuth()).send({ ...USER, roles: ['user'] }).expect(201);
  }, 300_000);

  afterAll(async () => {
    await gw?.close();
    for (const { env } of connections) await env.teardown().catch(() => undefined);
    await release?.();
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
  });

  const select = (name: string, query: string, collection?: string) =>
    gw
      .http()
      .get(`${gw.api}/search/search-${name}${collection ? `/${collection}` : ''}/select?${encodeQuery(query)}`)
      .set('Authorization', user());

  it(`has a table of at least 40 select requests and a corpus of at least 500 documents`, () => {
    expect(SELECTS.length).toBeGreaterThanOrEqual(40);
    expect(corpus.length).toBe(CORPUS_SIZE);
    expect(CORPUS_SIZE).toBeGreaterThanOrEqual(500);
  });

  it.each(SELECTS)('%s: the same answer on every engine (%s)', async (_title, query) => {
    const answers = await Promise.all(connections.map(async ({ name }) => ({ name, res: await select(name, query) })));
    for (const { name, res } of answers) expect({ name, status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ name, status: 200, body: 'ok' });
    const [reference, ...others] = answers.map(({ name, res }) => ({ name, results: res.body.results }));
    if (!query.includes('nosuchword') && !query.includes('start=1000')) {
      expect(reference.results.numFound).toBeGreaterThan(0);
    }
    if (/rows=(?!0)/.test(query) || !query.includes('rows=')) expect(reference.results.docs.length).toBe(Math.min(reference.results.rows, Math.max(0, reference.results.numFound - reference.results.start)));
    for (const other of others) {
      expect({ engine: other.name, ids: ids(other.results), numFound: other.results.numFound, facets: other.results.facets }).toEqual({
        engine: other.name,
        ids: ids(reference.results),
        numFound: reference.results.numFound,
        facets: reference.results.facets,
      });
      expect({ engine: other.name, docs: other.results.docs }).toEqual({ engine: other.name, docs: reference.results.docs });
    }
  });

  it.each(EXPECTED_ANSWERS)('$title: the answer written out from the corpus, on every engine ($query)', async (expected) => {
    for (const { name } of connections) {
      const res = await select(name, expected.query);
      expect({ engine: name, status: res.status }).toEqual({ engine: name, status: 200 });
      const { results } = res.body;
      expect({ engine: name, numFound: results.numFound, ids: ids(results), facets: results.facets }).toEqual({
        engine: name,
        numFound: expected.numFound,
        ids: expected.ids,
        facets: expected.facets,
      });
    }
  });

  it('answers the agreed shape: envelope, paging members, id always, dates ISO 8601 UTC, numbers, arrays, facet order', async () => {
    for (const { name } of connections) {
      const res = await select(name, 'q=tags:*&fl=size,created,tags&facet=true&facet.field=tags&sort=id asc&rows=3').expect(200);
      expect(res.body.success).toBe(true);
      const results = res.body.results;
      expect(Object.keys(results).sort()).toEqual(['docs', 'facets', 'numFound', 'rows', 'start']);
      expect(results).toMatchObject({ start: 0, rows: 3 });
      const expected = corpus.filter((d) => d.tags).slice(0, 3);
      expect(results.docs).toEqual(
        expected.map((d) => ({ id: d.id, size: d.size, created: new Date(d.created).toISOString(), tags: d.tags })),
      );
      const counts = new Map<string, number>();
      for (const d of corpus) for (const t of d.tags ?? []) counts.set(t, (counts.get(t) ?? 0) + 1);
      const buckets = [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1));
      expect(results.facets).toEqual({ tags: buckets });
      const plain = await select(name, 'q=*:*&rows=1').expect(200);
      expect(plain.body.results.facets).toBeUndefined();
      expect(plain.body.results.numFound).toBe(CORPUS_SIZE);
    }
  });

  describe.each(SEARCH_FIXTURES.map((f) => f.name))('%s', (name) => {
    const env = () => connections.find((c) => c.name === name)!.env;

    it('takes the collection from the path, else from the connection; without either, 400 naming collection', async () => {
      const inPath = await select(`${name}-nocoll`, 'q=author:alice&rows=0', env().collection).expect(200);
      const configured = await select(name, 'q=author:alice&rows=0').expect(200);
      expect(inPath.body.results.numFound).toBe(corpus.filter((d) => d.author === 'alice').length);
      expect(configured.body.results.numFound).toBe(inPath.body.results.numFound);
      const none = await select(`${name}-nocoll`, 'q=*:*').expect(400);
      expect(none.body.error).toMatchObject({ code: 'INVALID_PARAMETER', parameter: 'collection' });
      const noneQuery = await gw.http().post(`${gw.api}/search/search-${name}-nocoll/query`).set('Authorization', user()).send({}).expect(400);
      expect(noneQuery.body.error.parameter).toBe('collection');
    });

    it('answers 404 naming an unknown collection (select and query)', async () => {
      const res = await select(name, 'q=*:*', 'no-such-collection').expect(404);
      expect(res.body.error).toMatchObject({ code: 'COLLECTION_NOT_FOUND', resource: 'collection', id: 'no-such-collection' });
      const raw = await gw.http().post(`${gw.api}/search/search-${name}/no-such-collection/query`).set('Authorization', user()).send({}).expect(404);
      expect(raw.body.error.id).toBe('no-such-collection');
    });

    it('runs a raw query in the engine\'s own syntax and answers the engine\'s own result', async () => {
      const body = env().rawQueryByAuthor('bob', 5);
      const res = await gw.http().post(`${gw.api}/search/search-${name}/query`).set('Authorization', user()).send(body as object).expect(200);
      expect(res.body.success).toBe(true);
      expect(env().idsOfRawAnswer(res.body.results)).toEqual(corpus.filter((d) => d.author === 'bob').slice(0, 5).map((d) => d.id));
      const inPath = await gw.http().post(`${gw.api}/search/search-${name}-nocoll/${env().collection}/query`).set('Authorization', user()).send(body as object).expect(200);
      expect(env().idsOfRawAnswer(inPath.body.results)).toEqual(env().idsOfRawAnswer(res.body.results));
    });

    it('caps a raw query at maxRows', async () => {
      const res = await gw.http().post(`${gw.api}/search/search-${name}/query`).set('Authorization', user()).send(env().rawQueryByAuthor('carol', 5000) as object).expect(200);
      const count = corpus.filter((d) => d.author === 'carol').length;
      expect(env().idsOfRawAnswer(res.body.results)).toHaveLength(Math.min(count, 1000));
    });

    it('refuses the dangerous constructs of a raw query with 400 naming them', async () => {
      for (const { construct, body } of env().refusedQueries) {
        const res = await gw.http().post(`${gw.api}/search/search-${name}/query`).set('Authorization', user()).send(body as object);
        expect({ construct, status: res.status }).toEqual({ construct, status: 400 });
        expect(res.body.error.code).toBe('RAW_QUERY_REFUSED');
        expect(res.body.message).toContain(construct.replace(' params', ''));
      }
    });

    it("answers a raw query the engine refuses as malformed with 400 naming body, with the engine's reason", async () => {
      const res = await gw.http().post(`${gw.api}/search/search-${name}/query`).set('Authorization', user()).send(env().engineErrorQuery as object).expect(400);
      expect(res.body).toMatchObject({ success: false, error: { code: 'ENGINE_REFUSED_QUERY', parameter: 'body' } });
      expect(res.body.message).toMatch(/^The engine refused the raw query: .{10,}/);
    });

    it('appears in connections; repositoryInfo derives search and index, nothing of content; content routes answer 501 naming content', async () => {
      const list = await gw.http().get(`${gw.api}/repo/connections`).set('Authorization', user()).expect(200);
      expect(list.body.results).toContainEqual(expect.objectContaining({ id: `search-${name}`, typeId: name }));
      const info = await gw.http().get(`${gw.api}/repo/search-${name}/repositoryInfo`).set('Authorization', user()).expect(200);
      const on = Object.entries(info.body.results.capabilities).filter(([, v]) => v).map(([k]) => k);
      expect(on.sort()).toEqual(['index', 'search']);
      expect(info.body.results.params.collection).toBe(env().collection);
      const content = await gw.http().get(`${gw.api}/repo/search-${name}/rootfolderid`).set('Authorization', user()).expect(501);
      expect(content.body.error).toMatchObject({ code: 'NOT_SUPPORTED', capability: 'content' });
    });
  });

  it('answers 501 naming search for a content-only connector', async () => {
    const res = await gw.http().get(`${gw.api}/search/files/select?q=*:*`).set('Authorization', user()).expect(501);
    expect(res.body.error).toMatchObject({ code: 'NOT_SUPPORTED', capability: 'search' });
  });

  it('is ready when every engine is up', async () => {
    const res = await gw.http().get(`${gw.api}/health/ready`).expect(200);
    for (const { name } of connections) expect(res.body.results.details[`connector:search-${name}`]).toMatchObject({ status: 'up', typeId: name });
  });

  describe('engines that are down or never answer', () => {
    let broken: TestGateway;
    let silent: net.Server;
    const sockets = new Set<net.Socket>();

    beforeAll(async () => {
      const closedPort = await freePort();
      silent = net.createServer((socket) => {
        // Accepts and never answers.
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const silentPort = (silent.address() as net.AddressInfo).port;
      const connectors = connections.flatMap(({ name, env }) => {
        const typeId = SEARCH_FIXTURES.find((f) => f.name === name)!.typeId;
        return [
          { id: `down-${name}`, typeId, description: 'closed port', params: env.paramsAt(closedPort, 1500) },
          { id: `slow-${name}`, typeId, description: 'never answers', params: env.paramsAt(silentPort, 700) },
          ...(env.refusedCredentials
            ? [
                { id: `nocreds-${name}`, typeId, description: 'no credentials', params: env.refusedCredentials.none },
                { id: `wrongcreds-${name}`, typeId, description: 'wrong credentials', params: env.refusedCredentials.wrong },
              ]
            : []),
        ];
      });
      const file = path.join(configDir, 'broken.yaml');
      fs.writeFileSync(file, stringify({ connectors }));
      broken = await startGateway({ env: { GATEWAY_CONFIG: file } });
    });

    afterAll(async () => {
      await broken?.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent?.close(resolve));
    });

    it.each(SEARCH_FIXTURES.map((f) => f.name))('%s: a closed port is 503 on select and query', async (name) => {
      const res = await broken.http().get(`${broken.api}/search/down-${name}/select?q=*:*`).set('Authorization', adminAuth()).expect(503);
      expect(res.body.error.code).toBe('UPSTREAM_UNAVAILABLE');
      await broken.http().post(`${broken.api}/search/down-${name}/query`).set('Authorization', adminAuth()).send({}).expect(503);
    });

    it.each(SEARCH_FIXTURES.map((f) => f.name))('%s: an engine that never answers is 504 after timeoutMs', async (name) => {
      const res = await broken.http().get(`${broken.api}/search/slow-${name}/select?q=*:*`).set('Authorization', adminAuth()).expect(504);
      expect(res.body.error.code).toBe('UPSTREAM_TIMEOUT');
    });

    // The harness's Solr (BasicAuthPlugin) and Elasticsearch (authenticating proxy) refuse a request
    // without the connector's credentials: these pass only if the connector sends its Authorization header.
    it.each(SEARCH_FIXTURES.map((f) => f.name).filter((name) => name === 'solr' || name === 'elasticsearch'))(
      '%s: no credentials or a wrong one is refused by the engine (401), answered 502 on select and query',
      async (name) => {
        expect(connections.find((c) => c.name === name)!.env.refusedCredentials).toBeDefined();
        for (const id of [`nocreds-${name}`, `wrongcreds-${name}`]) {
          const res = await broken.http().get(`${broken.api}/search/${id}/select?q=*:*`).set('Authorization', adminAuth());
          expect({ id, status: res.status, code: res.body.error?.code }).toEqual({ id, status: 502, code: 'UPSTREAM_ERROR' });
          const raw = await broken.http().post(`${broken.api}/search/${id}/query`).set('Authorization', adminAuth()).send({});
          expect({ id, status: raw.status }).toEqual({ id, status: 502 });
        }
      },
    );

    it('reports them down in readiness', async () => {
      const res = await broken.http().get(`${broken.api}/health/ready`).expect(503);
      for (const { name } of connections) {
        expect(res.body.error.details[`connector:down-${name}`]).toMatchObject({ status: 'down' });
        expect(res.body.error.details[`connector:slow-${name}`]).toMatchObject({ status: 'down' });
      }
    });
  });
});

function ids(results: { docs: { id: string }[] }): string[] {
  return results.docs.map((d) => d.id);
}

/** Encodes each value of a readable query string (spaces, quotes, brackets, slashes). */
function encodeQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return `${encodeURIComponent(pair.slice(0, eq))}=${encodeURIComponent(pair.slice(eq + 1))}`;
    })
    .join('&');
}

