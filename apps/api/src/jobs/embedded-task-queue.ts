import { Limiter } from '@gateway/concurrency';
import { Logger } from '@nestjs/common';
import { TaskInterrupted, type TaskHandler, type TaskQueue, type TaskRef } from './task-queue';

/**
 * The in-process queue of the embedded mode: FIFO, a few tasks at a time (the
 * documents inside them share the executor's bounded concurrency).
 */
export class EmbeddedTaskQueue implements TaskQueue {
  readonly mode = 'embedded' as const;
  private readonly logger = new Logger('EmbeddedTaskQueue');
  private readonly slots: Limiter;
  /** Aborted by drain: queued tasks give up their place and never start. */
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private handler?: TaskHandler;

  constructor(slots: number) {
    this.slots = new Limiter(slots);
  }

  setHandler(handler: TaskHandler): void {
    this.handler = handler;
  }

  async enqueue(refs: TaskRef[]): Promise<void> {
    for (const ref of refs) {
      if (this.stopping.signal.aborted) return;
      const p: Promise<void> = this.slots
        .run(() => this.handler!(ref), this.stopping.signal)
        .catch((e: unknown) => {
          if (this.stopping.signal.aborted && e === this.stopping.signal.reason) return; // dropped by drain before it started
          if (!(e instanceof TaskInterrupted)) this.logger.error({ err: e, task: ref }, 'Job task failed');
        })
        .finally(() => this.running.delete(p));
      this.running.add(p);
    }
  }

  async drain(): Promise<void> {
    this.stopping.abort(new TaskInterrupted());
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
