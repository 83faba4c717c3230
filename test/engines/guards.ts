/**
 * For test files: tests that need engines which global-setup did not start (GATEWAY_TEST_ENGINES
 * left them out) are reported as skipped, with the reason in their name, instead of vanishing.
 */
import { hasEngine } from './index';
import type { EngineName } from './engines';

function missing(names: readonly EngineName[]): EngineName[] {
  return names.filter((name) => !hasEngine(name));
}

function skipReason(absent: readonly EngineName[]): string {
  return ` [skipped: engine ${absent.join(', ')} not started (GATEWAY_TEST_ENGINES)]`;
}

/** `it` when every named engine runs, else `it.skip` with the reason appended to the test's name. */
export function itWithEngines(...names: EngineName[]): jest.It {
  const absent = missing(names);
  if (absent.length === 0) return it;
  const skipped = ((name: string, fn?: jest.ProvidesCallback, timeout?: number) => it.skip(name + skipReason(absent), fn, timeout)) as jest.It;
  return skipped;
}

/** `describe` when every named engine runs, else `describe.skip` with the reason appended to the block's name. */
export function describeWithEngines(...names: EngineName[]): jest.Describe {
  const absent = missing(names);
  if (absent.length === 0) return describe;
  return ((name: string, fn: jest.EmptyFunction) => describe.skip(name + skipReason(absent), fn)) as jest.Describe;
}
