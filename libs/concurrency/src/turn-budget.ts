import { performance } from 'node:perf_hooks';

/**
 * Milliseconds of deferred work one event-loop turn runs before the rest waits for the next turn.
 * The soak's target is an event-loop delay p99 under 100 ms (issue 16, bench/soak.js): a turn is
 * this budget, plus the one task that crosses it, plus the I/O callbacks of the poll phase (socket
 * writes, file reads, upload chunks: each small) and whatever the collector adds.
 */
export const TURN_BUDGET_MS = 20;

type Task = () => void;

/**
 * Bounds the work one event-loop turn does (issue 16, "Load"). A long synchronous run holds every
 * other connection: under 200 connections the gateway's turns were whole rounds of every request in
 * flight (1–4 s of event-loop delay), because libuv's poll phase hands over every socket that is
 * ready, each one's request ran its middleware chain to its first real I/O, and every listing's
 * `setImmediate` yield resumed in the same check phase as all the others.
 *
 * Work given to `defer` (or awaited through `turn()`) runs in the check phase of the loop, in order
 * of arrival, each task with its microtasks (Node runs them between immediates) counted: once the
 * tasks of one check phase have taken `budgetMs`, the rest are put back for the next turn, behind a
 * marker that starts that turn's count. Nothing is dropped or reordered among the waiting tasks; under
 * overload they wait (latency grows) while the loop keeps turning, so timers, socket writes and
 * uploads' bytes keep flowing. A task runs at the earliest in the turn it was deferred in (from the
 * poll phase) or the next one (from the check phase itself), the same as `setImmediate`.
 *
 * One per process (`eventLoopBudget`): there is one event loop to share.
 */
export class TurnBudget {
  /** Milliseconds taken by the tasks run so far in this check phase (the last one not yet counted). */
  private spent = 0;
  /** When the task that ran last in this check phase started; -1 before the first one. */
  private lastStart = -1;
  private markerArmed = false;
  private waitingTasks = 0;
  private deferredTurns = 0;

  constructor(private readonly budgetMs = TURN_BUDGET_MS) {}

  /** Runs `task` in a check phase with budget left: this turn's, or a later one. */
  defer(task: Task): void {
    this.waitingTasks++;
    this.armMarker();
    setImmediate(this.attempt, task);
  }

  /** Resolves in a turn with budget left: `await eventLoopBudget.turn()` between the batches of a long job. */
  turn(): Promise<void> {
    return new Promise<void>((resolve) => this.defer(resolve));
  }

  /** Tasks deferred and not yet run. */
  get waiting(): number {
    return this.waitingTasks;
  }

  /** Tasks put back for a later turn because their turn's budget was spent (for tests and figures). */
  get putBack(): number {
    return this.deferredTurns;
  }

  private readonly attempt = (task: Task): void => {
    const now = performance.now();
    // What ran since the previous task started: that task, its microtasks, any immediates between.
    if (this.lastStart >= 0) this.spent += now - this.lastStart;
    if (this.spent >= this.budgetMs) {
      this.lastStart = -1;
      this.deferredTurns++;
      this.armMarker();
      setImmediate(this.attempt, task);
      return;
    }
    this.lastStart = now;
    this.waitingTasks--;
    task();
  };

  /** Queued ahead of the next turn's tasks (immediates run in the order queued): that turn's count starts at 0. */
  private armMarker(): void {
    if (this.markerArmed) return;
    this.markerArmed = true;
    setImmediate(this.startTurn);
  }

  private readonly startTurn = (): void => {
    this.markerArmed = false;
    this.spent = 0;
    this.lastStart = -1;
  };
}

/** The process's one budget: request dispatch (apps/api bootstrap) and long jobs' batches share it. */
export const eventLoopBudget = new TurnBudget();
