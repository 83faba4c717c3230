import { Logger } from '@nestjs/common';
import { TaskInterrupted, type TaskHandler, type TaskQueue, type TaskRef } from './task-queue';

/**
 * The in-process queue of the embedded mode: FIFO, a few tasks at a time (the
 * documents inside them share the executor's bounded concurrency).
 */
export class EmbeddedTaskQueue implements TaskQueue {
  readonly mode = 'embedded' as const;
  private readonly logger = new Logger('EmbeddedTaskQueue');
  private readonly waiting: TaskRef[] = [];
  private readonly running = new Set<Promise<void>>();
  private handler?: TaskHandler;
  private draining = false;

  constructor(private readonly slots: number) {}

  setHandler(handler: TaskHandler): void {
    this.handler = handler;
  }

  async enqueue(refs: TaskRef[]): Promise<void> {
    if (this.draining) return;
    this.waiting.push(...refs);
    this.pump();
  }

  private pump(): void {
    while (!this.draining && this.handler && this.running.size < this.slots && this.waiting.length > 0) {
      const ref = this.waiting.shift()!;
      const p: Promise<void> = this.handler(ref)
        .catch((e: unknown) => {
          if (!(e instanceof TaskInterrupted)) this.logger.error({ err: e, task: ref }, 'Job task failed');
        })
        .finally(() => {
          this.running.delete(p);
          this.pump();
        });
      this.running.add(p);
    }
  }

  async drain(): Promise<void> {
    this.draining = true;
    this.waiting.length = 0;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
