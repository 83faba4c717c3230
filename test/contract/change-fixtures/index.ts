import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChangeFeedFixture } from './types';

/** Every connector kind with a change feed, keyed by typeId: each `*.fixture.ts` file beside this one, found by name. */
export const CHANGE_FEED_FIXTURES: Record<string, ChangeFeedFixture> = gatherFixtures();

function gatherFixtures(): Record<string, ChangeFeedFixture> {
  const fixtures: Record<string, ChangeFeedFixture> = {};
  for (const file of fs.readdirSync(__dirname).filter((f) => f.endsWith('.fixture.ts')).sort()) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the fixtures are whatever files the folder holds
    const { fixture } = require(path.join(__dirname, file)) as { fixture?: ChangeFeedFixture };
    if (!fixture?.typeId) throw new Error(`test/contract/change-fixtures/${file} must export a ChangeFeedFixture named 'fixture'`);
    if (fixtures[fixture.typeId]) throw new Error(`Two change-feed fixtures for connector kind '${fixture.typeId}'`);
    fixtures[fixture.typeId] = fixture;
  }
  return fixtures;
}

export type { ChangeFeedEnvironment, ChangeFeedFixture } from './types';
