/**
 * Jest globalSetup: starts the engines named in GATEWAY_TEST_ENGINES (comma list; default all;
 * "none" for none) and writes their connection info to a JSON file whose path goes to
 * GATEWAY_ENGINES_FILE, which the test files read with readEngines() from test/engines.
 * Jest workers are started after this runs, so they inherit the variable. Prints which engines run
 * and which were left out (their tests report as skipped, guards.ts); any engine that fails to start
 * fails the whole run.
 */
import { ENGINE_NAMES, ENGINES_FILE_ENV, ENGINES_SELECT_ENV, parseEngineList, writeEnginesFile } from './engines';
import { startEngines } from './start';

export default async function globalSetup(): Promise<void> {
  const names = parseEngineList(process.env[ENGINES_SELECT_ENV]);
  const left = ENGINE_NAMES.filter((name) => !names.includes(name));
  const started = Date.now();
  const handles = await startEngines(names);
  const file = writeEnginesFile(handles);
  process.env[ENGINES_FILE_ENV] = file;
  process.stderr.write(
    `[engines] running: ${names.length ? names.join(', ') : 'none'} (up in ${((Date.now() - started) / 1000).toFixed(1)} s); ` +
      `left out by ${ENGINES_SELECT_ENV}: ${left.length ? left.join(', ') : 'none'}; ${ENGINES_FILE_ENV}=${file}\n`,
  );
}
