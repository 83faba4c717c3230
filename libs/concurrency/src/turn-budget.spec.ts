import * as fs from 'node:fs';
import { TurnBudget } from './turn-budget';

/** Holds the thread for at least `ms` (a task that takes that long; a loaded machine only makes it longer). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning: the synchronous work of one task
  }
}

/** Resolves once `count` entries are logged. */
function logged(log: string[], count: number): Promise<void> {
  return new Promise((resolve) => {
    const look = () => (log.length >= count ? resolve() : setTimeout(look, 1));
    look();
  });
}

/**
 * Runs `start` in an I/O callback (the poll phase), as the gateway's requests run. From there the loop's
 * order is fixed: the check phase (immediates) comes before the next timers phase. From the main module
 * a 0 ms timer may fire before or after the first immediates, whichever the clock says.
 */
function inIoCallback(start: () => void): Promise<void> {
  return new Promise((resolve, reject) =>
    fs.stat(__filename, (error) => {
      if (error) return reject(error);
      start();
      resolve();
    }),
  );
}

describe('TurnBudget', () => {
  it('runs every deferred task, in order of arrival', async () => {
    const budget = new TurnBudget(1_000);
    const log: string[] = [];
    for (let i = 0; i < 5; i++) budget.defer(() => log.push(`task ${i}`));
    expect(budget.waiting).toBe(5);
    await logged(log, 5);
    expect(log).toEqual(['task 0', 'task 1', 'task 2', 'task 3', 'task 4']);
    expect(budget.waiting).toBe(0);
  });

  it('lets the loop turn (timers, I/O) once a turn has spent its budget, and runs the rest after, still in order', async () => {
    const budget = new TurnBudget(5);
    const log: string[] = [];
    // Ten tasks of 3 ms: with plain setImmediate all ten run in one check phase, before any timer.
    await inIoCallback(() => {
      for (let i = 0; i < 10; i++) {
        budget.defer(() => {
          busy(3);
          log.push(`task ${i}`);
        });
      }
      setTimeout(() => log.push('timer'), 0);
    });
    await logged(log, 11);
    const timerAt = log.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(10);
    expect(log.filter((e) => e !== 'timer')).toEqual(Array.from({ length: 10 }, (_, i) => `task ${i}`));
    expect(budget.putBack).toBeGreaterThan(0);
  });

  it('counts the microtasks a task starts as part of that task', async () => {
    const budget = new TurnBudget(5);
    const log: string[] = [];
    // Each task returns at once; its work (4 ms) runs in the microtasks it queued.
    await inIoCallback(() => {
      for (let i = 0; i < 6; i++) {
        budget.defer(() => {
          void Promise.resolve().then(() => {
            busy(4);
            log.push(`task ${i}`);
          });
        });
      }
      setTimeout(() => log.push('timer'), 0);
    });
    await logged(log, 7);
    const timerAt = log.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(6);
  });

  it('turn() resumes many waiting jobs over several turns, not all in one check phase', async () => {
    const budget = new TurnBudget(5);
    const log: string[] = [];
    // Twenty listings in flight, each awaiting its next batch (3 ms): with a bare setImmediate every
    // one of them resumed in the same check phase, 60 ms before any timer could fire.
    const job = async (n: number) => {
      await budget.turn();
      busy(3);
      log.push(`job ${n}`);
    };
    let jobs: Promise<void>[] = [];
    await inIoCallback(() => {
      jobs = Array.from({ length: 20 }, (_, n) => job(n));
      setTimeout(() => log.push('timer'), 0);
    });
    await Promise.all(jobs);
    await logged(log, 21);
    const timerAt = log.indexOf('timer');
    expect(timerAt).toBeGreaterThan(0);
    expect(timerAt).toBeLessThan(20);
    expect(log.filter((e) => e !== 'timer')).toEqual(Array.from({ length: 20 }, (_, n) => `job ${n}`));
  });

  it('runs work in progress before new work, letting one new task in after every three continuations', async () => {
    const budget = new TurnBudget(1_000);
    const log: string[] = [];
    for (let i = 0; i < 4; i++) budget.defer(() => log.push(`new ${i}`));
    for (let i = 0; i < 6; i++) void budget.turn().then(() => log.push(`continued ${i}`));
    await logged(log, 10);
    expect(log).toEqual(['continued 0', 'continued 1', 'continued 2', 'new 0', 'continued 3', 'continued 4', 'continued 5', 'new 1', 'new 2', 'new 3']);
    expect(budget.waiting).toBe(0);
  });
});
