/**
 * For test files: a test that needs engines which global-setup did not start (GATEWAY_TEST_ENGINES left them
 * out) fails, naming them, instead of vanishing or being skipped: a restricted run says what it did not check.
 */
import { hasEngine } from './index';
import type { EngineName } from './engines';

function missing(names: readonly EngineName[]): EngineName[] {
  return names.filter((name) => !hasEngine(name));
}

function notStarted(absent: readonly EngineName[]): Error {
  return new Error(`engine ${absent.join(', ')} not started (GATEWAY_TEST_ENGINES left it out): this test did not run`);
}

/** `it` when every named engine runs, else a test of that name failing with the missing engines named. */
export function itWithEngines(...names: EngineName[]): jest.It {
  const absent = missing(names);
  if (absent.length === 0) return it;
  return ((name: string) =>
    it(name, () => {
      throw notStarted(absent);
    })) as jest.It;
}

/** `describe` when every named engine runs, else a block of that name holding one failing test naming the missing engines. */
export function describeWithEngines(...names: EngineName[]): jest.Describe {
  const absent = missing(names);
  if (absent.length === 0) return describe;
  return ((name: string) =>
    describe(name, () => {
      it('needs its engines', () => {
        throw notStarted(absent);
      });
    })) as unknown as jest.Describe;
}
