/** Jest globalTeardown: stops every engine that global-setup started and removes their folders. */
import { ENGINES_FILE_ENV, killEnginesFromFile, stopEngines } from './engines';

export default async function globalTeardown(): Promise<void> {
  const file = process.env[ENGINES_FILE_ENV];
  await stopEngines();
  // If the harness module was loaded afresh (its in-memory state lost), stop what the file lists.
  if (file) killEnginesFromFile(file);
}
