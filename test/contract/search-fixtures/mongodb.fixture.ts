import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { CorpusDocument } from './corpus';
import type { SearchConnectorFixture } from './types';

const DATABASE = 'search_contract';

/** A fresh collection on the harness's FerretDB (MongoDB wire protocol): dates as dates, tags as arrays. */
export const fixture: SearchConnectorFixture = {
  name: 'mongodb',
  typeId: 'mongodb',
  async setup(engines, corpus: CorpusDocument[]) {
    const uri = `${engines.ferretdb.uri}?directConnection=true`;
    const collection = `contract_${randomBytes(4).toString('hex')}`;
    const client = new MongoClient(uri);
    try {
      const db = client.db(DATABASE);
      await db.createCollection(collection);
      await db.collection(collection).insertMany(corpus.map((doc) => ({ _id: doc.id as never, ...doc, created: new Date(doc.created) })));
    } finally {
      await client.close();
    }
    return {
      collection,
      // FerretDB evaluates the text-word regular expressions document by document: seconds per query on this corpus.
      params: { uri, database: DATABASE, collection, timeoutMs: 60_000 },
      paramsAt: (port, timeoutMs) => ({ uri: `mongodb://127.0.0.1:${port}/?directConnection=true`, database: DATABASE, collection, timeoutMs }),
      rawQueryByAuthor: (author, limit) => ({ filter: { author }, sort: { id: 1 }, limit, projection: { id: 1, author: 1 } }),
      idsOfRawAnswer: (answer) => (answer as { id: string }[]).map((d) => d.id),
      engineErrorQuery: { filter: { size: { $nosuchoperator: 1 } } },
      refusedQueries: [
        { construct: '$where', body: { filter: { $where: 'sleep(100) || true' } } },
        { construct: '$function', body: { filter: { $expr: { $function: { body: 'function() { return true }', args: [], lang: 'js' } } } } },
        { construct: '$accumulator', body: { filter: { $expr: { $accumulator: {} } } } },
      ],
      teardown: async () => {
        const cleanup = new MongoClient(uri);
        try {
          await cleanup.db(DATABASE).collection(collection).drop();
        } finally {
          await cleanup.close();
        }
      },
    };
  },
};
