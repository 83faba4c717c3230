import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc(options)`: a young-generation ('minor') or full ('major') collection. */
export type Collect = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collector: Collect | null | undefined;

/**
 * V8's gc() without starting the process with --expose-gc: the flag is set at run time (a process-wide
 * side effect) and the function read from a fresh context, so the main context stays without a global
 * `gc`. Null if the runtime refuses; callers then go without. Who asks for collections and why:
 * idle-heap-trim.ts (new space given back at idle) and body-collections.ts (request-body garbage).
 */
export function v8Collector(): Collect | null {
  if (collector !== undefined) return collector;
  const existing = (globalThis as { gc?: Collect }).gc;
  if (typeof existing === 'function') return (collector = existing);
  try {
    setFlagsFromString('--expose-gc');
    const fn = runInNewContext('gc') as unknown;
    collector = typeof fn === 'function' ? (fn as Collect) : null;
  } catch {
    collector = null;
  }
  return collector;
}
