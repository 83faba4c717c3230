import { MongoClient, type Collection, type Db, type Document } from 'mongodb';
import {
  InvalidArgumentError,
  NotFoundError,
  facetValue,
  resultDocument,
  sortBuckets,
  type ConnectorDefinition,
  type SearchResults,
  EngineConnector,
  INDEX_FIELDS,
  UpstreamError,
  searchPublicParams,
  type IndexCapability,
} from '@gateway/connector-api';
import { MongoBulkWriteError, type WriteError } from 'mongodb';
import { checkMongoRawQuery, checkMongoTrimmedRawQuery, missingLastFinds, toMongoRequest, trimMongoFilter, trimMongoRequest, type SearchRequest } from '@gateway/search-query';
import { mapMongoError } from './mongo-errors';
import { redactUri, type MongoParams } from './params';

/** How long a collection seen to exist is believed to (a select on a missing collection would just find nothing). */
const COLLECTION_TTL_MS = 60_000;
const RAW_QUERY_KEYS = ['filter', 'projection', 'sort', 'skip', 'limit'];

/** typeId `mongodb`: search only, a find (and facet aggregations) over one collection, through the official driver. */
export class MongoConnector extends EngineConnector {
  readonly typeId = 'mongodb';
  protected readonly rawQueryBody = 'an object {filter, projection, sort, skip, limit}';
  readonly publicParams: Record<string, unknown>;
  private readonly client: MongoClient;
  private readonly db: Db;
  private readonly knownCollections = new Map<string, number>();
  readonly index: IndexCapability;

  constructor(definition: ConnectorDefinition, private readonly params: MongoParams) {
    super(definition, params.settings);
    const { settings } = params;
    this.publicParams = {
      uri: redactUri(params.uri),
      database: params.database,
      ...searchPublicParams(settings),
    };
    this.client = new MongoClient(params.uri, {
      connectTimeoutMS: settings.timeoutMs,
      socketTimeoutMS: settings.timeoutMs,
      // Past connectTimeoutMS, so a connection that hangs is seen as timed out (504), not merely unselectable.
      serverSelectionTimeoutMS: settings.timeoutMs + 1000,
      maxPoolSize: 32,
    });
    this.db = this.client.db(params.database);
    const timeoutMs = settings.timeoutMs;
    const guard = async <T>(collection: string, call: () => Promise<T>): Promise<T> => {
      try {
        return await call();
      } catch (e) {
        if (e instanceof MongoBulkWriteError) {
          const first = writeErrorsOf(e)[0] as WriteError | undefined;
          const operation = first?.getOperation() as { _id?: string; q?: { _id?: string } } | undefined; // the gateway's ids are strings
          const id = operation?.q?._id ?? operation?._id;
          throw new UpstreamError(`MongoDB refused document${id !== undefined ? ` '${id}'` : ''}: ${first?.errmsg ?? e.message}`, { id });
        }
        throw mapMongoError(e, timeoutMs, collection);
      }
    };
    this.index = {
      ensureCollection: (collection) => guard(collection, () => this.ensureCollection(collection)),
      // `_id` is the document id, so ids stay unique without an extra index. The documents are inserted in one
      // bulk and only those that exist already (duplicate key) are replaced: an upsert per document is a search
      // by _id each, which FerretDB on SQLite answers with a scan (10,000 documents took minutes), and a
      // look-up of the batch's ids first scanned once per batch. A first run inserts only; a later run
      // writes only the documents that changed.
      write: (collection, documents) =>
        guard(collection, async () => {
          if (documents.length === 0) return;
          const target = this.db.collection(collection);
          try {
            await target.insertMany(
              documents.map((document) => ({ ...mongoDocument(document), _id: document.id as never })),
              { ordered: false, maxTimeMS: timeoutMs },
            );
          } catch (e) {
            const errors = e instanceof MongoBulkWriteError ? writeErrorsOf(e) : [];
            if (errors.length === 0 || errors.some((w) => w.code !== DUPLICATE_KEY)) throw e;
            await target.bulkWrite(
              errors.map((w) => ({ replaceOne: { filter: { _id: documents[w.index].id as never }, replacement: mongoDocument(documents[w.index]), upsert: true } })),
              { ordered: false, maxTimeMS: timeoutMs },
            );
          }
        }),
      delete: (collection, ids) =>
        guard(collection, async () => {
          if (ids.length === 0) return;
          await this.db.collection(collection).deleteMany({ _id: { $in: ids as never[] } }, { maxTimeMS: timeoutMs });
        }),
      // Acknowledged writes are already visible to finds.
      commit: async () => undefined,
    };
  }

  /** The collection and one index per facet/sort field of the index mapping (text fields are searched by regex, unindexed). */
  private async ensureCollection(collection: string): Promise<void> {
    const found = await this.db.listCollections({ name: collection }, { nameOnly: true }).toArray();
    if (found.length === 0) {
      try {
        await this.db.createCollection(collection);
      } catch (e) {
        // 48 NamespaceExists: another caller created it meanwhile.
        if ((e as { code?: number }).code !== 48) throw e;
      }
    }
    const keys = Object.entries(INDEX_FIELDS).filter(([, field]) => field.type !== 'text').map(([name]) => name);
    // createIndexes with indexes that exist already is a no-op on the server.
    const existing = new Set(((await this.db.collection(collection).listIndexes().toArray()) as Array<{ name: string }>).map((index) => index.name));
    for (const name of keys) {
      if (!existing.has(`gw_${name}`)) await this.db.collection(collection).createIndex({ [name]: 1 }, { name: `gw_${name}` });
    }
    this.knownCollections.set(collection, Date.now());
  }

  async checkHealth(): Promise<void> {
    try {
      await this.db.command({ ping: 1 });
      const collection = this.params.settings.collection;
      if (collection) await this.requireCollection(collection);
    } catch (e) {
      throw mapMongoError(e, this.params.settings.timeoutMs);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  protected async select(collection: string, request: SearchRequest, principals?: readonly string[]): Promise<SearchResults> {
    const maxTimeMS = this.params.settings.timeoutMs;
    const mongo = principals ? trimMongoRequest(toMongoRequest(request), principals) : toMongoRequest(request);
    try {
      await this.requireCollection(collection);
      const target = this.db.collection(collection);
      const facetFields = request.facetFields ?? [];
      const [docs, numFound, ...facetLists] = await Promise.all([
        this.findPage(target, mongo, maxTimeMS),
        target.countDocuments(mongo.filter, { maxTimeMS }),
        ...facetFields.map((field) => target.aggregate(mongo.facetPipelines[field] ?? [], { maxTimeMS }).toArray()),
      ]);
      const results: SearchResults = {
        numFound,
        start: request.start,
        rows: request.rows,
        docs: docs.map((doc) => resultDocument(doc.id ?? doc._id, doc, request.schema, request.fields)),
      };
      if (facetFields.length > 0) {
        results.facets = Object.fromEntries(
          facetFields.map((field, i) => [
            field,
            sortBuckets(facetLists[i].map((b) => ({ value: facetValue(b._id, request.schema[field]), count: Number(b.count) }))),
          ]),
        );
      }
      return results;
    } catch (e) {
      throw mapMongoError(e, maxTimeMS, collection);
    }
  }

  /** `{filter, projection, sort, skip, limit}` as one find on the collection; limit capped at maxRows. Answers the documents. */
  protected async rawQuery(collection: string, input: Record<string, unknown>, principals?: readonly string[]): Promise<unknown> {
    for (const key of Object.keys(input)) {
      if (!RAW_QUERY_KEYS.includes(key)) throw new InvalidArgumentError(key, `unknown member (known: ${RAW_QUERY_KEYS.join(', ')})`);
    }
    checkMongoRawQuery(input);
    if (principals) checkMongoTrimmedRawQuery(input);
    for (const key of ['filter', 'projection', 'sort']) {
      const value = input[key];
      if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
        throw new InvalidArgumentError(key, 'must be an object');
      }
    }
    const max = this.params.settings.maxRows;
    const skip = count(input.skip, 'skip', 0);
    const limit = Math.min(count(input.limit, 'limit', max) || max, max);
    const maxTimeMS = this.params.settings.timeoutMs;
    try {
      await this.requireCollection(collection);
      return await this.db
        .collection(collection)
        .find((principals ? trimMongoFilter((input.filter ?? {}) as Record<string, unknown>, principals) : (input.filter ?? {})) as Document, {
          projection: input.projection as Document | undefined,
          sort: input.sort as Document | undefined,
          skip,
          limit,
          maxTimeMS,
        })
        .toArray();
    } catch (e) {
      throw mapMongoError(e, maxTimeMS, collection);
    }
  }

  /**
   * The page of documents. MongoDB sorts missing values first ascending, Solr and Elasticsearch last:
   * with `missingLast` the page is read from the documents with a value, then those without.
   */
  private async findPage(target: Collection, mongo: ReturnType<typeof toMongoRequest>, maxTimeMS: number): Promise<Document[]> {
    // limit 0 means "no limit" to MongoDB; rows=0 means no documents.
    if (mongo.limit === 0) return [];
    const options = { projection: mongo.projection, sort: mongo.sort, maxTimeMS };
    if (!mongo.missingLast) return target.find(mongo.filter, { ...options, skip: mongo.skip, limit: mongo.limit }).toArray();
    const withValue = await target.countDocuments(mongo.missingLast.withValue, { maxTimeMS });
    const parts = await Promise.all(
      missingLastFinds(mongo.missingLast, mongo.skip, mongo.limit, withValue).map((find) =>
        target.find(find.filter, { ...options, skip: find.skip, limit: find.limit }).toArray(),
      ),
    );
    return parts.flat();
  }

  private async requireCollection(collection: string): Promise<void> {
    const seen = this.knownCollections.get(collection);
    if (seen !== undefined && Date.now() - seen < COLLECTION_TTL_MS) return;
    const found = await this.db.listCollections({ name: collection }, { nameOnly: true }).toArray();
    if (found.length === 0) throw new NotFoundError('collection', collection);
    this.knownCollections.set(collection, Date.now());
  }
}

function count(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new InvalidArgumentError(name, 'must be an integer >= 0');
  return value;
}

/** Date fields as BSON dates, so the gateway's date ranges and sorts compare dates, not strings. */
/** MongoDB's duplicate key error. */
const DUPLICATE_KEY = 11000;

function writeErrorsOf(e: MongoBulkWriteError): readonly WriteError[] {
  return ([] as WriteError[]).concat(e.writeErrors);
}

function mongoDocument(document: Record<string, unknown>): Document {
  const out: Document = {};
  for (const [key, value] of Object.entries(document)) {
    if (value === undefined || value === null) continue;
    out[key] = INDEX_FIELDS[key]?.type === 'date' && (typeof value === 'string' || typeof value === 'number') ? new Date(value) : value;
  }
  return out;
}
