import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker thread script `name` of `directory` (the caller's `__dirname`): the compiled
 * `name.js` beside the compiled caller (the build, dist/), or, where there is none (the TypeScript
 * sources under ts-jest), `name.ts` through ts-node. The one way the gateway starts a thread: the
 * password threads (apps/api auth/password.worker.ts) and the filesystem connector's copy and
 * records threads. A thread only requires packages and files relative to its own script, so
 * a script given as a file needs no resolved paths handed over, unlike an eval'd source.
 */
export function startWorkerScript(directory: string, name: string, options: WorkerOptions = {}): Worker {
  const compiled = path.join(directory, `${name}.js`);
  if (existsSync(compiled)) return new Worker(compiled, options);
  const source = path.join(directory, `${name}.ts`);
  // tsconfig-paths resolves the @gateway/* imports as jest's moduleNameMapper does (from the tsconfig.json of the working directory).
  const bootstrap = `require('ts-node').register({ transpileOnly: true }); require('tsconfig-paths/register'); require(${JSON.stringify(source)});`;
  return new Worker(bootstrap, { ...options, eval: true });
}
