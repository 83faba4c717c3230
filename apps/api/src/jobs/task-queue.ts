/** One unit of a run's work, as queued: the task row (run, key) and the attempt it belongs to. */
export interface TaskRef {
  runId: string;
  key: string;
  /** The run's attempt when queued; work queued before a resume is ignored. */
  attempt: number;
}

/**
 * A task's place in a queue that runs a few at a time (the embedded one). `release` says the task
 * no longer needs it before it returns: a docs task that handed out its last document only waits
 * for those in flight, and the next task can meanwhile claim its batch and start, so the copies do
 * not pause between tasks. Releasing twice, or again when the task returns, releases once.
 */
export interface TaskSlot {
  release(): void;
}

export type TaskHandler = (ref: TaskRef, slot?: TaskSlot) => Promise<void>;

/**
 * Where tasks wait for a worker. Embedded: an in-process queue. Redis: BullMQ,
 * shared by every gateway process. The executor registers the handler.
 */
export interface TaskQueue {
  readonly mode: 'embedded' | 'redis';
  setHandler(handler: TaskHandler): void;
  /**
   * `listing`: these tasks list folders (enum tasks). The embedded queue runs them in a lane of their
   * own beside the tasks that copy, so the listing keeps ahead of the copies: a run's copies never
   * wait for its next folder to be listed, and its first page's documents are copied while the rest
   * is listed. BullMQ runs every task alike.
   */
  enqueue(refs: TaskRef[], options?: { listing?: boolean }): Promise<void>;
  /** Stop taking tasks; resolves once the running ones returned. */
  drain(): Promise<void>;
}

export const TASK_QUEUE = Symbol('TASK_QUEUE');

/** Thrown by a task stopped by shutdown: the queue must hand it to another worker later. */
export class TaskInterrupted extends Error {
  constructor() {
    super('Task interrupted by shutdown');
  }
}
