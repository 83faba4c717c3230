import type { SearchEngines } from './search-engines';
import type { CorpusDocument } from './corpus';

/**
 * A search connector under contract test. Adding a search connector kind to
 * the suite means adding one of these to search-fixtures/index.ts, nothing else.
 */
export interface SearchConnectorFixture {
  /** Shown in test titles; also the connector id stem. */
  name: string;
  typeId: string;
  /** Loads the corpus into a fresh collection of the engine and says how to reach it. */
  setup(engines: SearchEngines, corpus: CorpusDocument[]): Promise<SearchEnvironment>;
}

export interface SearchEnvironment {
  /** The connector params, `collection` included. */
  params: Record<string, unknown>;
  collection: string;
  /**
   * The same connection without its credentials, and with a wrong one, for engines that demand them
   * (the harness's Solr and Elasticsearch do; FerretDB v1 has no authentication).
   */
  refusedCredentials?: { none: Record<string, unknown>; wrong: Record<string, unknown> };
  /** The same connection pointed at another port of 127.0.0.1 (down and time-out cases), with this timeoutMs. */
  paramsAt(port: number, timeoutMs: number): Record<string, unknown>;
  /** A raw query (engine syntax) for the query route: documents whose author is `author`, sorted by id, `limit` of them. */
  rawQueryByAuthor(author: string, limit: number): unknown;
  /** The ids in the engine's own answer to that raw query, in order. */
  idsOfRawAnswer(answer: unknown): string[];
  /** A raw query the engine itself rejects (its error becomes 502). */
  engineErrorQuery: unknown;
  /** Constructs the guard must refuse (400 naming `construct`). */
  refusedQueries: { construct: string; body: unknown }[];
  teardown(): Promise<void>;
}
