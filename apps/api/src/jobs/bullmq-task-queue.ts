import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import type { GatewayConfig } from '../config/gateway-config';
import type { TaskHandler, TaskQueue, TaskRef } from './task-queue';

export const JOB_QUEUE = 'gateway-jobs';
/** A process that stops renewing its lock (killed) loses its tasks to another process after this. */
export const LOCK_DURATION_MS = 10_000;

/**
 * Redis connection options from REDIS_URL; and the key prefix, one per
 * database, so gateways that share a database share the queue (and only they).
 */
export function bullOptions(config: GatewayConfig) {
  const url = new URL(config.jobs.redisUrl!);
  const database = config.databaseUrl ?? path.join(config.dataDir, 'gateway.sqlite');
  return {
    connection: {
      host: url.hostname,
      port: Number(url.port || 6379),
      ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
      ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
      ...(url.pathname.length > 1 ? { db: Number(url.pathname.slice(1)) } : {}),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    },
    prefix: `gw-${createHash('sha1').update(database).digest('hex').slice(0, 12)}`,
  };
}

/** BullMQ as the task queue: every gateway process on the same Redis and database takes tasks from it. */
@Injectable()
export class BullTaskQueue implements TaskQueue {
  readonly mode = 'redis' as const;
  handler?: TaskHandler;
  readonly running = new Set<Promise<void>>();
  draining = false;

  constructor(@InjectQueue(JOB_QUEUE) private readonly queue: Queue) {}

  setHandler(handler: TaskHandler): void {
    this.handler = handler;
  }

  async enqueue(refs: TaskRef[]): Promise<void> {
    for (let i = 0; i < refs.length; i += 500) {
      await this.queue.addBulk(
        refs.slice(i, i + 500).map((ref) => ({
          name: 'task',
          data: ref,
          opts: {
            // Deterministic: a task queued twice (an enumeration redone after a crash) runs once per attempt.
            jobId: `${ref.runId}.${ref.attempt}.${ref.key}`,
            attempts: 1000,
            backoff: { type: 'fixed', delay: 500 },
            removeOnComplete: true,
            removeOnFail: true,
          },
        })),
      );
    }
  }

  /** Closes the BullMQ worker without waiting for its fetch loop (set by the processor). */
  closeWorker?: () => Promise<void>;

  async drain(): Promise<void> {
    this.draining = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
    // This process's tasks have ended, so the worker is closed forced: a plain close (what @nestjs/bullmq
    // does at shutdown) waits for the worker's fetch loop, and after a Redis outage that loop was seen to
    // hold a gateway's shutdown for good (issue 16). A job fetched meanwhile was refused ('stopping') and
    // BullMQ retries it; the forced close is the one the module's close then finds done.
    await this.closeWorker?.();
  }
}

@Processor(JOB_QUEUE, { concurrency: 4, lockDuration: LOCK_DURATION_MS, stalledInterval: 2_000, maxStalledCount: 1000 })
export class JobTaskProcessor extends WorkerHost {
  private readonly logger = new Logger(JobTaskProcessor.name);

  constructor(private readonly tasks: BullTaskQueue) {
    super();
    tasks.closeWorker = () => this.worker.close(true);
  }

  /**
   * The worker's own errors, into the gateway's log. Without a listener BullMQ prints them with console.error,
   * outside the JSON log. Expected after a Redis outage longer than LOCK_DURATION_MS: the tasks in flight lost
   * their locks, so finishing them answers "Missing lock"; BullMQ hands them out again as stalled, and the
   * task rows (done, or claimed documents checked at the target) keep the rerun from doing anything twice.
   */
  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    this.logger.warn(`BullMQ worker: ${error.message}`);
  }

  async process(job: Job<TaskRef>): Promise<void> {
    if (this.tasks.draining || !this.tasks.handler) throw new Error('This gateway process is stopping');
    const p = this.tasks.handler(job.data);
    this.tasks.running.add(p);
    try {
      await p;
    } finally {
      this.tasks.running.delete(p);
    }
  }
}
