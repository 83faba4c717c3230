import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts the worker script `name` of this folder: the compiled one, or under ts-jest (no compiled
 * file beside the source) the TypeScript source through ts-node. The copy thread starts the
 * records thread this way too (direct-copy.worker.ts).
 */
export function startWorkerScript(name: string, options: WorkerOptions = {}): Worker {
  const compiled = path.join(__dirname, `${name}.js`);
  if (existsSync(compiled)) return new Worker(compiled, options);
  const source = path.join(__dirname, `${name}.ts`);
  return new Worker(`require('ts-node').register({ transpileOnly: true }); require(${JSON.stringify(source)});`, { ...options, eval: true });
}
