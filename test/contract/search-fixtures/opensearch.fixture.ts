import { queryDslFixture } from './elasticsearch.fixture';

/** OpenSearch speaks Elasticsearch's Query DSL: the same index, loaded the same way; its own members are refused too. */
export const fixture = queryDslFixture('opensearch', [
  { construct: 'search_pipeline', body: { query: { match_all: {} }, search_pipeline: { request_processors: [] } } },
  { construct: 'ext', body: { query: { match_all: {} }, ext: { generative_qa_parameters: { llm_question: 'x' } } } },
  { construct: 'neural', body: { query: { neural: { v: { query_text: 'x', model_id: 'm', k: 5 } } } } },
]);
