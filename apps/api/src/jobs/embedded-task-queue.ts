import { Limiter } from '@gateway/concurrency';
import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '@gateway/persistence';
import { TaskInterrupted, type TaskHandler, type TaskQueue, type TaskRef } from './task-queue';

/**
 * The in-process queue of the embedded mode: FIFO in two lanes, a few tasks at a time in each.
 * Tasks that copy (docs, sweep) share `slots` (the documents inside them share the executor's
 * bounded concurrency); tasks that list folders have `listingSlots` of their own, so that listing
 * never waits behind copies, nor copies behind listing
 * (docs/decisions/0015-job-listing-lane-and-records-thread.md).
 */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 5_000;

export class EmbeddedTaskQueue implements TaskQueue {
  readonly mode = 'embedded' as const;
  private readonly logger = new Logger('EmbeddedTaskQueue');
  private readonly slots: Limiter;
  private readonly listingSlots: Limiter;
  /** Aborted by drain: queued tasks give up their place and never start. */
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private handler?: TaskHandler;

  constructor(slots: number, listingSlots: number) {
    this.slots = new Limiter(slots);
    this.listingSlots = new Limiter(listingSlots);
  }

  setHandler(handler: TaskHandler): void {
    this.handler = handler;
  }

  async enqueue(refs: TaskRef[], options?: { listing?: boolean }): Promise<void> {
    const lane = options?.listing === true ? this.listingSlots : this.slots;
    for (const ref of refs) this.schedule(ref, lane, 0);
  }

  private schedule(ref: TaskRef, lane: Limiter, retries: number): void {
    if (this.stopping.signal.aborted) return;
    const p: Promise<void> = lane
      .run((release) => this.handler!(ref, { release }), this.stopping.signal)
      .catch((e: unknown) => {
        if (this.stopping.signal.aborted && e === this.stopping.signal.reason) return; // dropped by drain before it started
        if (e instanceof TaskInterrupted) return;
        if (isDatabaseUnavailable(e)) {
          // The task's row could not be read or written (PostgreSQL away). Dropped, the run would stay
          // RUNNING for ever with nothing working on it; handed out again once the database answers, as
          // BullMQ hands out a stalled task (the executor takes a task it already started again).
          const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(retries, 10));
          this.logger.warn({ err: e, task: ref, retryInMs: delay }, 'Job task could not reach the database; retrying');
          // Pending until the retry is handed on, so drain() waits for it or cancels it.
          return new Promise<void>((resolve) => {
            const onAbort = () => {
              clearTimeout(timer);
              resolve();
            };
            const timer = setTimeout(() => {
              this.stopping.signal.removeEventListener('abort', onAbort);
              this.schedule(ref, lane, retries + 1);
              resolve();
            }, delay);
            this.stopping.signal.addEventListener('abort', onAbort, { once: true });
          });
        }
        this.logger.error({ err: e, task: ref }, 'Job task failed');
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  async drain(): Promise<void> {
    this.stopping.abort(new TaskInterrupted());
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
