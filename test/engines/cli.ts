/**
 * Manual use of the engine harness:
 *   npx ts-node --transpile-only test/engines/cli.ts build [names]   build/cache only (e.g. to warm CI)
 *   npx ts-node --transpile-only test/engines/cli.ts start [names]   start, print the engines file, run until Ctrl-C
 * names: comma list as in GATEWAY_TEST_ENGINES (default all).
 */
import { ENGINES_FILE_ENV, parseEngineList, stopEngines, writeEnginesFile } from './engines';
import { buildEngines, startEngines } from './start';

async function main(): Promise<void> {
  const [command = 'start', list] = process.argv.slice(2);
  const names = parseEngineList(list ?? process.env.GATEWAY_TEST_ENGINES);
  const started = Date.now();
  if (command === 'build') {
    await buildEngines(names);
    process.stderr.write(`[engines] built ${names.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return;
  }
  if (command !== 'start') throw new Error(`unknown command "${command}" (build | start)`);
  const handles = await startEngines(names);
  const file = writeEnginesFile(handles);
  process.stdout.write(`export ${ENGINES_FILE_ENV}=${file}\n`);
  process.stderr.write(`[engines] up in ${((Date.now() - started) / 1000).toFixed(1)} s; Ctrl-C stops them\n`);
  const keepAlive = setInterval(() => undefined, 1 << 30); // engines' handles are unref'd
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearInterval(keepAlive);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await stopEngines();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
