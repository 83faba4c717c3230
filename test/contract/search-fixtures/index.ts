import { elasticsearchFixture } from './elasticsearch.fixture';
import { mongodbFixture } from './mongodb.fixture';
import { solrFixture } from './solr.fixture';
import type { SearchConnectorFixture } from './types';

/** Every search connector the search contract runs against (each gives the same answers on the same corpus). */
export const SEARCH_FIXTURES: SearchConnectorFixture[] = [solrFixture, elasticsearchFixture, mongodbFixture];

export { generateCorpus, CORPUS_SIZE, AUTHORS, MIME_TYPES, TAGS, type CorpusDocument } from './corpus';
export { useSearchEngines, type SearchEngines } from './search-engines';
export type { SearchConnectorFixture, SearchEnvironment } from './types';
