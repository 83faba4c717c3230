import { performance } from 'node:perf_hooks';

/**
 * Milliseconds of deferred work one event-loop turn runs before the rest waits for the next turn.
 * The soak's target is an event-loop delay p99 under 100 ms (issue 16, bench/soak.js): a turn is
 * this budget, plus the one task that crosses it, plus the I/O callbacks of the poll phase (socket
 * writes, file reads, upload chunks: each small) and whatever the collector adds. 10 rather than 20:
 * the loop's own cost per turn is microseconds, and uploads' bytes arrive one socket read per turn
 * (60 s soaks at 200 connections: 20 ms, ELD p99 windows 49–131 ms, 44 uploads; 10 ms, 26–62 ms,
 * 76 uploads, 271 req/s against 284).
 */
export const TURN_BUDGET_MS = 10;

type Task = () => void;

/**
 * When work in progress and new work both wait, how many continuations run for each new task: work
 * already started finishes first (what it holds is freed sooner), and a long job yielding again and
 * again still cannot keep new requests out.
 */
export const CONTINUATIONS_PER_NEW_TASK = 3;

/**
 * Bounds the work one event-loop turn does (issue 16, "Load"). A long synchronous run holds every
 * other connection: under 200 connections the gateway's turns were whole rounds of every request in
 * flight (1–4 s of event-loop delay), because libuv's poll phase hands over every socket that is
 * ready, each one's request ran its middleware chain to its first real I/O, and every listing's
 * `setImmediate` yield resumed in the same check phase as all the others.
 *
 * Work given to `defer` (new work: a request) or awaited through `turn()` (work in progress: the next
 * batch of a listing) runs in the check phase of the loop. Each task is timed with the microtasks it
 * starts (Node runs them between immediates): once the tasks of one check phase have taken
 * `budgetMs`, the rest wait for the next turn, behind a marker that starts that turn's count. Each
 * waiting task has one immediate (a slot) queued for it; a slot runs whichever task is next, not
 * necessarily the one that queued it: continuations first, in order of arrival, and one new task after
 * every CONTINUATIONS_PER_NEW_TASK continuations while both wait, new tasks in order of arrival.
 * Finishing what was started before admitting more keeps the work in flight, and the memory it holds
 * across its waits, small: with one queue, every listing admitted kept its batch of items alive while
 * it waited behind all the others (the young generation's survivors, copied at every scavenge).
 * Nothing is dropped; under overload tasks wait (latency grows) while the loop keeps turning, so
 * timers, socket writes and uploads' bytes keep flowing. A task runs at the earliest in the turn it
 * was deferred in (from the poll phase) or the next one (from the check phase itself), as with
 * `setImmediate`.
 *
 * One per process (`eventLoopBudget`): there is one event loop to share.
 */
export class TurnBudget {
  /** Milliseconds taken by the tasks run so far in this check phase (the last one not yet counted). */
  private spent = 0;
  /** When the task that ran last in this check phase started; -1 before the first one. */
  private lastStart = -1;
  private markerArmed = false;
  private readonly continuations = new TaskQueue();
  private readonly fresh = new TaskQueue();
  private continuationsInARow = 0;
  private putBackSlots = 0;

  constructor(private readonly budgetMs = TURN_BUDGET_MS) {}

  /** Runs `task` (new work) in a check phase with budget left: this turn's, or a later one. */
  defer(task: Task): void {
    this.fresh.push(task);
    this.armSlot();
  }

  /** Resolves in a turn with budget left, ahead of new work: `await eventLoopBudget.turn()` between the batches of a long job. */
  turn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.continuations.push(resolve);
      this.armSlot();
    });
  }

  /** Tasks deferred and not yet run. */
  get waiting(): number {
    return this.continuations.length + this.fresh.length;
  }

  /** Slots put back for a later turn because their turn's budget was spent (for tests and figures). */
  get putBack(): number {
    return this.putBackSlots;
  }

  private armSlot(): void {
    this.armMarker();
    setImmediate(this.slot);
  }

  private readonly slot = (): void => {
    const now = performance.now();
    // What ran since the previous task started: that task, its microtasks, any immediates between.
    if (this.lastStart >= 0) this.spent += now - this.lastStart;
    if (this.spent >= this.budgetMs) {
      this.lastStart = -1;
      this.putBackSlots++;
      this.armSlot();
      return;
    }
    const task = this.next();
    if (task === undefined) return; // not expected: one slot per waiting task
    this.lastStart = now;
    task();
  };

  private next(): Task | undefined {
    const fresh = this.fresh.length > 0;
    if (this.continuations.length > 0 && !(fresh && this.continuationsInARow >= CONTINUATIONS_PER_NEW_TASK)) {
      this.continuationsInARow++;
      return this.continuations.shift();
    }
    this.continuationsInARow = 0;
    return this.fresh.shift();
  }

  /** Queued ahead of the next turn's slots (immediates run in the order queued): that turn's count starts at 0. */
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

/** First in, first out, without Array#shift's copying of what is left. */
class TaskQueue {
  private items: Array<Task | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(task: Task): void {
    this.items.push(task);
  }

  shift(): Task | undefined {
    if (this.head >= this.items.length) return undefined;
    const task = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return task;
  }
}

/** The process's one budget: request dispatch (apps/api bootstrap) and long jobs' batches share it. */
export const eventLoopBudget = new TurnBudget();
