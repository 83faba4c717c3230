/**
 * One real round trip per engine started by test/engines/global-setup.ts. Only the engines
 * named in GATEWAY_TEST_ENGINES (default all) run; the tests of the others fail, naming the engine left out. Without the global setup the file fails.
 */
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import Redis from 'ioredis';
import { Client } from 'pg';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getEngine, httpRequest, type EngineName } from './index';
import { GraphSetup } from '../contract/fixtures/graph-engine';
import { SharePointSetup } from '../contract/fixtures/sharepoint-engine';
import { toxiproxyClient } from './toxiproxy';
import { itWithEngines } from './guards';

// An engine left out on purpose (GATEWAY_TEST_ENGINES) fails its test, naming it; npm test starts all.
const withEngine = (name: EngineName) => itWithEngines(name);
const unique = () => randomBytes(6).toString('hex');

function multipart(fields: Record<string, string>, file: { field: string; name: string; type: string; content: Buffer }) {
  const boundary = `----gateway${unique()}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
        `Content-Type: ${file.type}\r\n\r\n`,
    ),
    file.content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('real engines (smoke)', () => {
  withEngine('cmis')('CMIS browser binding: createDocument with content, then read the content back; no or wrong password refused', async () => {
    const cmis = getEngine('cmis');
    const authorization = `Basic ${Buffer.from(`${cmis.username}:${cmis.password}`).toString('base64')}`;
    expect((await httpRequest(cmis.browserUrl)).status).toBe(401);
    const wrong = `Basic ${Buffer.from(`${cmis.username}:not-${cmis.password}`).toString('base64')}`;
    expect((await httpRequest(cmis.browserUrl, { headers: { authorization: wrong } })).status).toBe(401);
    // Any user name with the password: the gateway's userMapping: actor sends each gateway user's own.
    const otherUser = `Basic ${Buffer.from(`someone-else:${cmis.password}`).toString('base64')}`;
    expect((await httpRequest(cmis.browserUrl, { headers: { authorization: otherUser } })).status).toBe(200);
    const name = `smoke-${unique()}.txt`;
    const content = Buffer.from(`hello from the gateway ${unique()}\n`);
    const { body, contentType } = multipart(
      {
        cmisaction: 'createDocument',
        'propertyId[0]': 'cmis:name',
        'propertyValue[0]': name,
        'propertyId[1]': 'cmis:objectTypeId',
        'propertyValue[1]': 'cmis:document',
        succinct: 'true',
      },
      { field: 'content', name, type: 'text/plain', content },
    );
    const created = await httpRequest(cmis.rootFolderUrl, {
      method: 'POST',
      headers: { authorization, 'content-type': contentType },
      body,
    });
    expect(created.status).toBe(201);
    const objectId = created.json<{ succinctProperties: Record<string, unknown> }>().succinctProperties['cmis:objectId'];
    expect(typeof objectId).toBe('string');

    const read = await httpRequest(
      `${cmis.rootFolderUrl}?objectId=${encodeURIComponent(String(objectId))}&cmisselector=content`,
      { headers: { authorization } },
    );
    expect(read.status).toBe(200);
    expect(read.body.equals(content)).toBe(true);

    const byPath = await httpRequest(`${cmis.rootFolderUrl}/${encodeURIComponent(name)}?cmisselector=content`, {
      headers: { authorization },
    });
    expect(byPath.text()).toBe(content.toString());
  });

  withEngine('solr')('Solr: add a document to the core, then select it; no or wrong credentials refused', async () => {
    const solr = getEngine('solr');
    const id = `smoke-${unique()}`;
    expect((await httpRequest(`${solr.coreUrl}/select?q=*:*&wt=json`)).status).toBe(401);
    const wrong = `Basic ${Buffer.from(`${solr.user}:not-${solr.password}`).toString('base64')}`;
    expect((await httpRequest(`${solr.coreUrl}/select?q=*:*&wt=json`, { headers: { authorization: wrong } })).status).toBe(401);
    const added = await httpRequest(`${solr.coreUrl}/update?commit=true&wt=json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: solr.authorization },
      body: JSON.stringify([{ id, title: 'Smoke test', content: 'the quick brown fox', owner_s: 'ann', size_i: 42 }]),
    });
    expect(added.status).toBe(200);
    const found = await httpRequest(`${solr.coreUrl}/select?q=${encodeURIComponent(`content:fox AND id:${id}`)}&wt=json`, {
      headers: { authorization: solr.authorization },
    });
    expect(found.status).toBe(200);
    const response = found.json<{ response: { numFound: number; docs: Array<Record<string, unknown>> } }>().response;
    expect(response.numFound).toBe(1);
    expect(response.docs[0]).toMatchObject({ id, owner_s: 'ann', size_i: 42 });
  });

  withEngine('elasticsearch')('Elasticsearch: index a document with refresh, then search it; no or wrong credentials refused', async () => {
    const es = getEngine('elasticsearch');
    expect(es.version).toMatch(/^8\./);
    const index = `smoke-${unique()}`;
    expect((await httpRequest(es.url)).status).toBe(401);
    expect((await httpRequest(es.url, { headers: { authorization: `ApiKey not-${es.apiKey}` } })).status).toBe(401);
    const basic = `Basic ${Buffer.from(`${es.user}:${es.password}`).toString('base64')}`;
    expect((await httpRequest(es.url, { headers: { authorization: basic } })).status).toBe(200);
    const indexed = await httpRequest(`${es.url}/${index}/_doc/1?refresh=true`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: es.authorization },
      body: JSON.stringify({ title: 'Smoke test', content: 'the quick brown fox' }),
    });
    expect(indexed.status).toBe(201);
    expect(indexed.headers['x-elastic-product']).toBe('Elasticsearch');
    const searched = await httpRequest(`${es.url}/${index}/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: es.authorization },
      body: JSON.stringify({ query: { match: { content: 'fox' } } }),
    });
    expect(searched.status).toBe(200);
    const hits = searched.json<{ hits: { total: { value: number }; hits: Array<{ _id: string }> } }>().hits;
    expect(hits.total.value).toBe(1);
    expect(hits.hits[0]._id).toBe('1');
  });

  withEngine('opensearch')('OpenSearch: index a document with refresh, then search it', async () => {
    const os = getEngine('opensearch');
    expect(os.version).toMatch(/^2\.19\./);
    const index = `smoke-${unique()}`;
    const indexed = await httpRequest(`${os.url}/${index}/_doc/1?refresh=true`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Smoke test', content: 'the quick brown fox' }),
    });
    expect(indexed.status).toBe(201);
    const root = (await httpRequest(os.url)).json<{ version: { distribution?: string } }>();
    expect(root.version.distribution).toBe('opensearch');
    const searched = await httpRequest(`${os.url}/${index}/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: { match: { content: 'fox' } } }),
    });
    expect(searched.status).toBe(200);
    const hits = searched.json<{ hits: { total: { value: number }; hits: Array<{ _id: string }> } }>().hits;
    expect(hits.total.value).toBe(1);
    expect(hits.hits[0]._id).toBe('1');
  });

  withEngine('ferretdb')('FerretDB: insert and find with the mongodb driver', async () => {
    const client = new MongoClient(getEngine('ferretdb').uri, { directConnection: true, serverSelectionTimeoutMS: 10_000 });
    await client.connect();
    try {
      const collection = client.db(`smoke_${unique()}`).collection<{ name: string; size: number }>('items');
      await collection.insertOne({ name: 'doc.txt', size: 3 });
      const found = await collection.findOne({ name: 'doc.txt' });
      expect(found).toMatchObject({ name: 'doc.txt', size: 3 });
    } finally {
      await client.close();
    }
  });

  withEngine('postgres')('PostgreSQL: select 1 with pg', async () => {
    const client = new Client({ connectionString: getEngine('postgres').url });
    await client.connect();
    try {
      const result = await client.query<{ one: number }>('select 1 as one');
      expect(result.rows).toEqual([{ one: 1 }]);
    } finally {
      await client.end();
    }
  });

  withEngine('redis')('Redis: SET and GET with ioredis', async () => {
    const redis = new Redis(getEngine('redis').url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    await redis.connect();
    try {
      const key = `smoke:${unique()}`;
      expect(await redis.set(key, 'value', 'EX', 60)).toBe('OK');
      expect(await redis.get(key)).toBe('value');
    } finally {
      redis.disconnect();
    }
  });

  for (const name of ['s3proxy', 'minio'] as const) {
    withEngine(name)(`${name}: a signed (AWS v4) PUT and GET with the AWS SDK; a wrong secret refused`, async () => {
      const info = getEngine(name);
      const clientFor = (secretAccessKey: string) =>
        new S3Client({
          endpoint: info.endpoint,
          region: info.region,
          forcePathStyle: true,
          credentials: { accessKeyId: info.accessKeyId, secretAccessKey },
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        });
      const client = clientFor(info.secretAccessKey);
      try {
        const bucket = `smoke-${unique()}`;
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'a b/ü.txt', Body: 'hello s3' }));
        const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a b/ü.txt' }));
        expect(await got.Body!.transformToString()).toBe('hello s3');
        // Signatures are checked: the same request signed with another secret is refused.
        const forger = clientFor('not-the-secret');
        const refused = await forger.send(new GetObjectCommand({ Bucket: bucket, Key: 'a b/ü.txt' })).then(
          () => 200,
          (e: { $metadata?: { httpStatusCode?: number } }) => e.$metadata?.httpStatusCode,
        );
        forger.destroy();
        expect(refused).toBe(403);
      } finally {
        client.destroy();
      }
    });
  }
  withEngine('graph')('Graph simulator: a token for the harness app, a file PUT by path, its item, and the 302 of its content', async () => {
    const setup = new GraphSetup(getEngine('graph'));
    const content = Buffer.from(`hello from the gateway ${unique()}\n`);
    const name = `smoke-${unique()}.txt`;
    const id = await setup.put(name, content);
    const item = await setup.call('GET', `/items/${id}?$select=id,name,size`);
    expect(item.json).toMatchObject({ id, name, size: content.length });
    const redirect = await setup.call('GET', `/items/${id}/content`);
    expect(redirect.status).toBe(302);
    expect(String(redirect.headers.location)).toMatch(/^https:\/\/localhost:\d+\//);
  });
  withEngine('sharepoint')('SharePoint simulator: an app-only token, a file uploaded to the library, its bytes read back through the REST API', async () => {
    const info = getEngine('sharepoint');
    // SharePointSetup gets its token with MSAL (certificate, client credentials) from the simulator's identity provider.
    const setup = new SharePointSetup(info);
    try {
      const content = Buffer.from(`hello from the gateway ${unique()}\n`);
      const name = `smoke-${unique()}.txt`;
      const folder = `${new URL(info.siteUrl).pathname}/Shared Documents`;
      const literal = (v: string) => encodeURIComponent(`'${v.replace(/'/g, "''")}'`);
      const added = await setup.http.json<{ UniqueId: string; Name: string; Length: string | number }>({
        method: 'POST',
        url: `${setup.api}/web/GetFolderByServerRelativePath(decodedurl=@f)/Files/AddUsingPath(decodedurl=@n,overwrite=false)?@f=${literal(folder)}&@n=${literal(name)}`,
        headers: { accept: 'application/json;odata=nometadata' },
        body: content,
      });
      expect(added.data).toMatchObject({ Name: name });
      expect(Number(added.data.Length)).toBe(content.length);
      const file = await setup.call('GET', `web/GetFileById('${added.data.UniqueId}')?$select=Name,ServerRelativeUrl`);
      expect(file).toMatchObject({ Name: name, ServerRelativeUrl: `${folder}/${name}` });
      const value = await setup.http.request({ method: 'GET', url: `${setup.api}/web/GetFileByServerRelativePath(decodedurl=@p)/$value?@p=${literal(`${folder}/${name}`)}` });
      const chunks: Buffer[] = [];
      for await (const chunk of value.body) chunks.push(chunk as Buffer);
      expect(value.status).toBe(200);
      expect(Buffer.concat(chunks).equals(content)).toBe(true);
    } finally {
      setup.close();
    }
  });
  withEngine('tika')('Tika Server: an RTF document PUT to /tika comes back as plain text', async () => {
    const tika = getEngine('tika');
    const word = `smoke${unique()}`;
    const answer = await httpRequest(`${tika.url}/tika`, {
      method: 'PUT',
      headers: { accept: 'text/plain', 'content-type': 'application/rtf' },
      body: `{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\\f0 Hello {\\b ${word}} from RTF\\par}`,
      timeoutMs: 60_000,
    });
    expect(answer.status).toBe(200);
    expect(answer.text()).toContain(`Hello ${word} from RTF`);
  });
  withEngine('toxiproxy')('Toxiproxy: a proxy passes bytes through, a toxic adds latency, a disabled proxy refuses connections', async () => {
    // A tiny echo-less upstream of our own: the smoke test needs no other engine.
    const net = await import('node:net');
    const upstream = net.createServer((socket) => socket.end('pong'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const proxy = await toxiproxyClient(getEngine('toxiproxy')).createProxy(`smoke-${unique()}`, `127.0.0.1:${(upstream.address() as { port: number }).port}`);
    const read = () =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(proxy.port, '127.0.0.1');
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
    try {
      expect(await read()).toBe('pong');
      await proxy.addToxic({ type: 'latency', attributes: { latency: 300 } });
      const started = Date.now();
      expect(await read()).toBe('pong');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250); // a lower bound: the toxic is in effect
      await proxy.disable();
      await expect(read()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      await proxy.reset();
      expect(await read()).toBe('pong');
    } finally {
      await proxy.delete();
      upstream.close();
    }
  });
});
