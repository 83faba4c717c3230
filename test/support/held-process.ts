import type { ChildProcess } from 'node:child_process';

/**
 * Lets processes run only in short slices (SIGCONT … SIGSTOP) until `reached`, asked while they are stopped,
 * says so; returns with them stopped (SIGCONT or SIGKILL them next). What `reached` reads (the database, the
 * files) cannot move between its answer and what the caller does then: a kill "mid-run" lands at a state the
 * test has seen, not at a moment it hoped for. The slice length only sets how far a process gets per step.
 */
export async function stopWhen(processes: readonly ChildProcess[], reached: () => Promise<boolean>, sliceMs = 5): Promise<void> {
  const signal = (s: NodeJS.Signals) => {
    for (const p of processes) p.kill(s);
  };
  signal('SIGSTOP');
  for (;;) {
    if (await reached()) return;
    signal('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, sliceMs));
    signal('SIGSTOP');
  }
}

/** A seeded pseudo-random generator (mulberry32): the same seed gives the same kill points, run after run. */
export function seededRandom(seed: number): { next: () => number; int: (min: number, max: number) => number } {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}
