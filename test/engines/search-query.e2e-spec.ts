/**
 * The search language's three translators against the real engines: one corpus in a Solr core, an
 * Elasticsearch index and a FerretDB collection of this file's own (the shared `gateway` core is left
 * alone), and for each q/fq/sort/facet case the same numFound, ordered ids and facet buckets from all
 * three. The HTTP contract suite (test/contract) checks the same through the gateway's connectors.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Db, MongoClient } from 'mongodb';
// Module by module rather than the package index: this jest config maps no @gateway/* paths, and the
// index also exports the raw-query guards, which import @gateway/connector-api.
import type { SearchRequest } from '../../libs/search-query/src/ast';
import { toElasticsearchRequest } from '../../libs/search-query/src/elasticsearch';
import { missingLastFinds, toMongoRequest } from '../../libs/search-query/src/mongo';
import { parseQuery, parseSort } from '../../libs/search-query/src/parser';
import { DEFAULT_FIELD_SCHEMA, fieldTypeOf } from '../../libs/search-query/src/schema';
import { toSolrRequest } from '../../libs/search-query/src/solr';
import { describeWithEngines } from './guards';
import { getEngine, httpRequest } from './index';

interface Doc {
  id: string;
  title?: string;
  name?: string;
  content?: string;
  path?: string;
  mime_type?: string;
  author?: string;
  tags?: string[];
  size?: number;
  created?: string;
  modified?: string;
}

const CORPUS: Doc[] = [
  { id: 'd01', title: 'Quarterly Report', name: 'report-q1.pdf', content: "The quick brown fox doesn't jump over the lazy dog.", path: '/reports/2024/q1', mime_type: 'application/pdf', author: 'Ann', tags: ['finance', 'report'], size: 1200, created: '2024-01-15T10:00:00Z', modified: '2024-02-01T00:00:00Z' },
  { id: 'd02', title: 'Annual report', name: 'annual.docx', content: 'Revenue grew 3.14 percent; see example.com for details. foo:bar', path: '/reports/2024/annual', mime_type: 'application/msword', author: 'Bob', tags: ['finance'], size: 54000, created: '2024-03-01T00:00:00Z', modified: '2024-03-02T12:30:00Z' },
  { id: 'd03', title: 'Fox sightings', name: 'fox.txt', content: 'A brown fox, quick and sly. Brown-fox sightings: 1,000 reported.', path: '/notes/wildlife', mime_type: 'text/plain', author: 'ann', tags: ['nature', 'Fox'], size: 300, created: '2023-12-31T23:59:59Z', modified: '2024-01-01T00:00:00Z' },
  { id: 'd04', title: 'Éric’s café menu', name: 'menu.html', content: 'Crème brûlée, ÉCLAIR, naïve choices. Dog-friendly café.', path: '/menus/cafe', mime_type: 'text/html', author: 'Éric', tags: ['food'], size: 4500, created: '2022-06-01T08:00:00Z', modified: '2022-06-02T08:00:00Z' },
  { id: 'd05', title: '中文文档', name: 'zh.txt', content: '我们喜欢中文和日本語。ひらがなテスト abc123 x_y สวัสดีครับ ทุกคน', path: '/intl/zh', mime_type: 'text/plain', author: 'Li Wei', tags: ['intl', 'zh'], size: 800, created: '2024-05-05T05:05:05.500Z', modified: '2024-05-05T05:05:06Z' },
  { id: 'd06', title: 'Empty tags', name: 'empty', content: '!!! ... ???', path: '/misc', mime_type: 'application/octet-stream', author: 'Bob', tags: [], size: 0, created: '2020-01-01T00:00:00Z' },
  { id: 'd07', title: 'No size at all', content: 'quick thinking; QUICK results; quickly done', path: '/misc/quick', mime_type: 'text/plain', author: 'Carol', tags: ['report', 'misc'], created: '2021-07-04T12:00:00Z' },
  { id: 'd08', title: 'Dog days', name: 'dog.md', content: 'The lazy dog sleeps. The dog, the fox.', path: '/notes/dogs', mime_type: 'text/markdown', author: 'Dave', tags: ['nature'], size: -5, created: '2024-01-15T10:00:00Z', modified: '2024-01-16T00:00:00Z' },
  { id: 'd09', title: 'Versions 1.2.3 and v2', name: 'versions.txt', content: "Release 1.2.3 shipped; v2 next. user@example.com wrote it's fine. abcสวัสดี", path: '/dev/releases', mime_type: 'text/plain', author: 'Eve', tags: ['dev', 'release'], size: 1200, created: '2024-02-29T00:00:00Z', modified: '2024-03-01T00:00:00Z' },
  { id: 'd10', title: 'Über straße', name: 'strasse.txt', content: 'ÜBER die Straße gehen. Σίσυφος ΣΊΣΥΦΟΣ', path: '/intl/de', mime_type: 'text/plain', author: 'Ann Smith', tags: ['intl', 'de'], size: 77, created: '2019-11-11T11:11:11Z', modified: '2019-11-12T11:11:11Z' },
  { id: 'd11', title: 'Report draft', name: 'draft.pdf', content: 'draft of the report: quick notes about foxes', path: '/reports/drafts', mime_type: 'application/pdf', author: 'Ann Smith', tags: ['report', 'draft'], size: 54000, created: '2024-03-01T00:00:00Z', modified: '2024-03-05T00:00:00Z' },
  { id: 'd12', title: 'Tabs\tand\nnewlines', name: 'ws.txt', content: 'first line\nsecond line\tthird', path: '/misc/ws', mime_type: 'text/plain', author: 'Bob', tags: ['misc'], size: 10, created: '2018-01-01T00:00:00Z' },
  { id: 'd13', title: '', content: '', path: '/misc/blank', mime_type: 'text/plain', author: '', tags: ['', 'misc', 'misc'], size: 1, created: '2018-01-01T00:00:00Z' },
];
const ALL = CORPUS.map((doc) => doc.id);
const except = (...ids: string[]) => ALL.filter((id) => !ids.includes(id));

/** A core of our own: the language's field types, every one sorting missing values last. */
const SOLR_SCHEMA = `<?xml version="1.0" encoding="UTF-8"?>
<schema name="search-query" version="1.6">
  <uniqueKey>id</uniqueKey>
  <field name="id" type="string" indexed="true" stored="true" required="true"/>
  <field name="_version_" type="plong" indexed="false" stored="false"/>
  <field name="title" type="text" indexed="true" stored="true"/>
  <field name="name" type="text" indexed="true" stored="true"/>
  <field name="content" type="text" indexed="true" stored="true"/>
  <field name="path" type="text" indexed="true" stored="true"/>
  <field name="mime_type" type="string" indexed="true" stored="true"/>
  <field name="author" type="string" indexed="true" stored="true"/>
  <field name="tags" type="string" indexed="true" stored="true" multiValued="true"/>
  <field name="size" type="plong" indexed="true" stored="true"/>
  <field name="created" type="pdate" indexed="true" stored="true"/>
  <field name="modified" type="pdate" indexed="true" stored="true"/>
  <fieldType name="string" class="solr.StrField" docValues="true" sortMissingLast="true"/>
  <fieldType name="plong" class="solr.LongPointField" docValues="true" sortMissingLast="true"/>
  <fieldType name="pdate" class="solr.DatePointField" docValues="true" sortMissingLast="true"/>
  <fieldType name="text" class="solr.TextField" positionIncrementGap="100">
    <analyzer><tokenizer name="standard"/><filter name="lowercase"/></analyzer>
  </fieldType>
</schema>
`;
const SOLR_CONFIG = `<?xml version="1.0" encoding="UTF-8"?>
<config>
  <luceneMatchVersion>9.0</luceneMatchVersion>
  <schemaFactory class="ClassicIndexSchemaFactory"/>
  <updateHandler class="solr.DirectUpdateHandler2"/>
  <requestHandler name="/select" class="solr.SearchHandler"/>
</config>
`;

interface Answer {
  numFound: number;
  ids: string[];
  facets: Record<string, [string, number][]>;
}

describeWithEngines('solr', 'elasticsearch', 'ferretdb')('search language on Solr, Elasticsearch and FerretDB', () => {
  const name = `search-query-${randomBytes(4).toString('hex')}`;
  let coreUrl: string;
  let indexUrl: string;
  let mongo: MongoClient;
  let db: Db;

  /** The credentials of the engine that `url` belongs to (Solr's BasicAuthPlugin, Elasticsearch's proxy). */
  function authorizationFor(url: string): string {
    const solr = getEngine('solr');
    return url.startsWith(solr.url) ? solr.authorization : getEngine('elasticsearch').authorization;
  }

  async function ok(url: string, method: string, body?: unknown, contentType = 'application/json') {
    const result = await httpRequest(url, {
      method,
      headers: { 'content-type': contentType, authorization: authorizationFor(url) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    if (result.status >= 300) throw new Error(`${method} ${url}: ${result.status} ${result.text().slice(0, 500)}`);
    return result.json<Record<string, any>>();
  }

  beforeAll(async () => {
    const solr = getEngine('solr');
    const instanceDir = path.join(solr.dir, 'home', name);
    fs.mkdirSync(path.join(instanceDir, 'conf'), { recursive: true });
    fs.writeFileSync(path.join(instanceDir, 'conf', 'schema.xml'), SOLR_SCHEMA);
    fs.writeFileSync(path.join(instanceDir, 'conf', 'solrconfig.xml'), SOLR_CONFIG);
    await ok(`${solr.url}/admin/cores?action=CREATE&name=${name}&instanceDir=${name}&wt=json`, 'GET');
    coreUrl = `${solr.url}/${name}`;
    await ok(`${coreUrl}/update?commit=true&wt=json`, 'POST', CORPUS);

    indexUrl = `${getEngine('elasticsearch').url}/${name}`;
    const text = { type: 'text', analyzer: 'standard' };
    await ok(indexUrl, 'PUT', {
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: {
        dynamic: 'strict',
        properties: {
          id: { type: 'keyword' }, title: text, name: text, content: text, path: text, mime_type: { type: 'keyword' },
          author: { type: 'keyword' }, tags: { type: 'keyword' }, size: { type: 'long' }, created: { type: 'date' }, modified: { type: 'date' },
        },
      },
    });
    const bulk = CORPUS.map((doc) => `${JSON.stringify({ index: { _id: doc.id } })}\n${JSON.stringify(doc)}\n`).join('');
    const indexed = await ok(`${indexUrl}/_bulk?refresh=true`, 'POST', bulk, 'application/x-ndjson');
    expect(indexed.errors).toBe(false);

    mongo = await MongoClient.connect(getEngine('ferretdb').uri, { directConnection: true });
    db = mongo.db(name.replace(/-/g, '_'));
    await db.collection('docs').insertMany(
      CORPUS.map((doc) => ({
        ...doc,
        ...(doc.created ? { created: new Date(doc.created) } : {}),
        ...(doc.modified ? { modified: new Date(doc.modified) } : {}),
      })),
    );
  });

  afterAll(async () => {
    if (coreUrl) await ok(`${getEngine('solr').url}/admin/cores?action=UNLOAD&core=${name}&deleteInstanceDir=true&wt=json`, 'GET');
    if (indexUrl) await ok(indexUrl, 'DELETE');
    if (db) await db.dropDatabase();
    await mongo?.close();
  });

  /** Facet values in one form: numbers and instants as text. */
  function bucketValue(field: string, value: unknown): string {
    if (fieldTypeOf(DEFAULT_FIELD_SCHEMA, field) === 'date') return new Date(value as string | number | Date).toISOString();
    return String(value);
  }

  async function search(q: string, options: { fq?: string[]; sort?: string; facets?: string[]; start?: number; rows?: number } = {}) {
    const request: SearchRequest = {
      query: parseQuery(q, 'q'),
      filters: (options.fq ?? []).map((fq) => parseQuery(fq, 'fq')),
      fields: ['id'],
      facetFields: options.facets,
      facetLimit: 4,
      start: options.start ?? 0,
      rows: options.rows ?? 50,
      sort: parseSort(options.sort ?? 'id asc'),
      schema: DEFAULT_FIELD_SCHEMA,
    };

    const solr = await ok(`${coreUrl}/select`, 'POST', toSolrRequest(request));
    const fromSolr: Answer = { numFound: solr.response.numFound, ids: solr.response.docs.map((doc: Doc) => doc.id), facets: {} };
    for (const [field, flat] of Object.entries<unknown[]>(solr.facet_counts?.facet_fields ?? {})) {
      fromSolr.facets[field] = [];
      for (let index = 0; index < flat.length; index += 2) fromSolr.facets[field].push([bucketValue(field, flat[index]), flat[index + 1] as number]);
    }

    const es = await ok(`${indexUrl}/_search`, 'POST', toElasticsearchRequest(request));
    const fromEs: Answer = { numFound: es.hits.total.value, ids: es.hits.hits.map((hit: { _source: Doc }) => hit._source.id), facets: {} };
    for (const [field, aggregation] of Object.entries<{ buckets: { key: unknown; doc_count: number }[] }>(es.aggregations ?? {})) {
      fromEs.facets[field] = aggregation.buckets.map((bucket) => [bucketValue(field, bucket.key), bucket.doc_count]);
    }

    const mongoRequest = toMongoRequest(request);
    const docs = db.collection('docs');
    // As the MongoDB connector does: an ascending first sort key is read in two parts (missingLast).
    const finds = mongoRequest.missingLast
      ? missingLastFinds(mongoRequest.missingLast, mongoRequest.skip, mongoRequest.limit, await docs.countDocuments(mongoRequest.missingLast.withValue))
      : [{ filter: mongoRequest.filter, skip: mongoRequest.skip, limit: mongoRequest.limit }];
    const found = [];
    for (const find of finds) {
      found.push(...(await docs.find(find.filter, { projection: mongoRequest.projection, sort: mongoRequest.sort, skip: find.skip, limit: find.limit }).toArray()));
    }
    const fromMongo: Answer = { numFound: await docs.countDocuments(mongoRequest.filter), ids: found.map((doc) => doc.id as string), facets: {} };
    for (const [field, pipeline] of Object.entries(mongoRequest.facetPipelines)) {
      fromMongo.facets[field] = (await docs.aggregate(pipeline).toArray()).map((bucket) => [bucketValue(field, bucket._id), bucket.count as number]);
    }

    expect(fromEs).toEqual(fromSolr);
    expect(fromMongo).toEqual(fromSolr);
    return fromSolr;
  }

  it.each<[string, string[]]>([
    ['*:*', ALL],
    ['fox', ['d01', 'd03', 'd08']],
    ['FOX', ['d01', 'd03', 'd08']],
    ['quick*', ['d01', 'd03', 'd07', 'd11']],
    ['"brown fox"', ['d01', 'd03']],
    ['"the dog"', ['d08']],
    ['"line third"', ['d12']],
    ["doesn't", ['d01']],
    ['doesn', []],
    ['example.com', ['d02', 'd09']],
    ['example', []],
    ['content:foo\\:bar', ['d02']],
    ['3.14', ['d02']],
    ['1,000', ['d03']],
    ['café', ['d04']],
    ['éclair', ['d04']],
    ['title:éric’s', ['d04']],
    ['σίσυφος', ['d10']],
    ['中文', ['d05']],
    ['"中文和"', ['d05']],
    ['テスト', ['d05']],
    ['x_y', ['d05']],
    ['สวัสดีครับ', ['d05']],
    ['"สวัสดีครับ ทุกคน"', ['d05']],
    ['สวัสดี', ['d09']],
    ['abc', ['d09']],
    ['path:"reports 2024"', ['d01', 'd02']],
    ['title:REPORT AND author:Ann', ['d01']],
    ['author:ann', ['d03']],
    ['author:"Ann Smith"', ['d10', 'd11']],
    ['author:Ann*', ['d01', 'd10', 'd11']],
    ['mime_type:text/plain', ['d03', 'd05', 'd07', 'd09', 'd10', 'd12', 'd13']],
    ['tags:Fox', ['d03']],
    ['tags:report -tags:draft', ['d01', 'd07']],
    ['NOT tags:finance', except('d01', 'd02')],
    ['-tags:*', ['d06']],
    ['-modified:*', ['d06', 'd07', 'd12', 'd13']],
    ['-size:*', ['d07']],
    ['size:-5', ['d08']],
    ['size:[* TO 500]', ['d03', 'd06', 'd08', 'd10', 'd12', 'd13']],
    ['created:[2024-01-01 TO *]', ['d01', 'd02', 'd05', 'd08', 'd09', 'd11']],
    ['created:"2024-01-15T12:00:00+02:00"', ['d01', 'd08']],
    ['created:2024-05-05T05:05:05.5Z', ['d05']],
    ['fox OR dog', ['d01', 'd03', 'd04', 'd08']],
    ['fox AND dog', ['d01', 'd08']],
    ['+fox dog', ['d01', 'd03', 'd08']],
    ['fox dog -lazy', ['d03', 'd04']],
    ['fox OR NOT dog', ['d03']],
    ['fox AND NOT dog OR café', ['d03', 'd04']],
    ['(fox OR dog) AND NOT (lazy OR sly)', ['d04']],
    ['NOT fox AND NOT dog', except('d01', 'd03', 'd04', 'd08')],
    ['report OR (NOT size:[1 TO *] AND -tags:misc)', ['d06', 'd08', 'd11']],
  ])('q=%s finds the same documents everywhere', async (q, ids) => {
    const answer = await search(q);
    expect(answer.ids).toEqual(ids);
    expect(answer.numFound).toBe(ids.length);
  });

  it('applies every fq form alike', async () => {
    expect((await search('*:*', { fq: ['tags:((finance) OR (nature))'] })).ids).toEqual(['d01', 'd02', 'd03', 'd08']);
    expect((await search('*:*', { fq: ['size:[1000 TO *]', 'mime_type:application/pdf'] })).ids).toEqual(['d01', 'd11']);
    expect((await search('report', { fq: ['created:[2024-03-01T00:00:00Z TO 2024-03-01T00:00:00Z]'] })).ids).toEqual(['d11']);
  });

  it('sorts alike, id breaking ties', async () => {
    expect((await search('*:*', { sort: 'created desc' })).ids).toEqual([
      'd05', 'd02', 'd11', 'd09', 'd01', 'd08', 'd03', 'd04', 'd07', 'd06', 'd10', 'd12', 'd13',
    ]);
    expect((await search('*:*', { sort: 'size desc, id desc' })).ids).toEqual([
      'd11', 'd02', 'd04', 'd09', 'd01', 'd05', 'd03', 'd10', 'd12', 'd13', 'd06', 'd08', 'd07',
    ]);
    expect((await search('*:*', { sort: 'size asc' })).ids).toEqual([
      'd08', 'd06', 'd13', 'd12', 'd10', 'd03', 'd05', 'd01', 'd09', 'd04', 'd02', 'd11', 'd07',
    ]);
    expect((await search('*:*', { sort: 'modified asc', start: 7, rows: 4 })).ids).toEqual(['d11', 'd05', 'd06', 'd07']);
    expect((await search('*:*', { sort: 'modified asc', start: 10, rows: 2 })).ids).toEqual(['d07', 'd12']);
    expect((await search('tags:*', { sort: 'author asc' })).ids).toEqual([
      'd13', 'd01', 'd10', 'd11', 'd02', 'd12', 'd07', 'd08', 'd09', 'd05', 'd03', 'd04',
    ]);
  });

  it('counts facet buckets alike: by count, then value', async () => {
    const answer = await search('*:*', { fq: ['created:[2018-01-01 TO 2024-03-01]'], facets: ['tags', 'author', 'size', 'created'] });
    expect(answer.facets).toEqual({
      tags: [['misc', 3], ['report', 3], ['finance', 2], ['nature', 2]],
      author: [['Bob', 3], ['Ann Smith', 2], ['', 1], ['Ann', 1]],
      size: [['1200', 2], ['54000', 2], ['-5', 1], ['0', 1]],
      created: [['2018-01-01T00:00:00.000Z', 2], ['2024-01-15T10:00:00.000Z', 2], ['2024-03-01T00:00:00.000Z', 2], ['2019-11-11T11:11:11.000Z', 1]],
    });
  });
});
