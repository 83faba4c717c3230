import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SearchConnectorFixture } from './types';

/**
 * Every search connector the search contract runs against: each `*.fixture.ts` file beside this one,
 * found by name (like test/contract/fixtures), so a new search connector kind adds its fixture file
 * and edits no test code. Each gives the same answers on the same corpus.
 */
export const SEARCH_FIXTURES: SearchConnectorFixture[] = gatherFixtures();

function gatherFixtures(): SearchConnectorFixture[] {
  const fixtures: SearchConnectorFixture[] = [];
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.fixture.ts')).sort()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the fixtures are whatever files the folder holds
    const { fixture } = require(path.join(__dirname, file)) as { fixture?: SearchConnectorFixture };
    if (!fixture?.typeId) throw new Error(`test/contract/search-fixtures/${file} must export a SearchConnectorFixture named 'fixture'`);
    if (fixtures.some((f) => f.typeId === fixture.typeId)) throw new Error(`Two search fixtures for connector kind '${fixture.typeId}'`);
    fixtures.push(fixture);
  }
  // Solr first: the reference the others are compared with in failure messages.
  return fixtures.sort((a, b) => (a.typeId === 'solr' ? -1 : b.typeId === 'solr' ? 1 : a.typeId.localeCompare(b.typeId)));
}

export { generateCorpus, CORPUS_SIZE, AUTHORS, MIME_TYPES, TAGS, type CorpusDocument } from './corpus';
export { indexTargets, useSearchEngines, type IndexEngineName, type IndexTarget, type SearchEngines } from './search-engines';
export type { SearchConnectorFixture, SearchEnvironment } from './types';
