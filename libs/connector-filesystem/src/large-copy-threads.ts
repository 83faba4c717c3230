import type { Worker } from 'node:worker_threads';
import { startWorkerScript } from '@gateway/concurrency';
import type { DirectCopyRequest, DirectCopyResult } from './direct-copy';
import type { WorkerScript } from './direct-copy-thread';

/**
 * Threads that make the direct copies of documents larger than the copy thread takes
 * (DIRECT_COPY_MAX_BYTES, direct-copies.ts): one document per thread at a time, read, hashed
 * (SHA-256) and written a chunk at a time (direct-copy.ts, `chunked`). Beside the copy thread, so a
 * large document never holds up the small ones queued there, and beside the event loop, which a
 * gigabyte's hash would block for a second. The hash is the CPU cost of such a copy (~1 s per GiB and
 * core), so two threads hash two documents at once on two cores; more would share the cores with the
 * event loop and the copy thread. A thread answers the placed file's stat: the event loop writes the
 * record (one per large document, no batching to win). Started on first use, unref'd when idle; a
 * thread that dies answers its copy `lost` and the next copy starts another. A job hands out many
 * documents at once (GATEWAY_JOB_LOCAL_CONCURRENCY): a copy still queued when its signal aborts (the
 * job paused or killed) leaves the queue, so a halt waits for the copies under way only.
 */
export const LARGE_COPY_THREADS = 2;

interface Waiting {
  request: DirectCopyRequest;
  resolve: (result: DirectCopyResult | { step: 'lost' }) => void;
  /** A thread took it: no longer given up on abort. */
  taken?: () => void;
}

export class LargeCopyThreads {
  private readonly idle: Worker[] = [];
  /** Each started thread, and the copy it makes (undefined while idle). */
  private readonly threads = new Map<Worker, Waiting | undefined>();
  private readonly queue: Waiting[] = [];

  constructor(
    private readonly script: WorkerScript = largeCopyScript,
    private readonly size = LARGE_COPY_THREADS,
  ) {}

  /** Rejects with the signal's reason when it aborts before a thread took the copy. */
  copy(request: DirectCopyRequest, signal?: AbortSignal): Promise<DirectCopyResult | { step: 'lost' }> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const waiting: Waiting = { request, resolve };
      const giveUp = () => {
        const at = this.queue.indexOf(waiting);
        if (at === -1) return;
        this.queue.splice(at, 1);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', giveUp, { once: true });
      waiting.taken = () => signal?.removeEventListener('abort', giveUp);
      this.queue.push(waiting);
      this.next();
    });
  }

  private next(): void {
    while (this.queue.length > 0) {
      const thread = this.idle.pop() ?? (this.threads.size < this.size ? this.start() : undefined);
      if (thread === undefined) return;
      const waiting = this.queue.shift()!;
      waiting.taken?.();
      this.threads.set(thread, waiting);
      thread.ref();
      thread.postMessage(waiting.request);
    }
  }

  private start(): Worker {
    const thread = this.script.start();
    this.threads.set(thread, undefined);
    thread.on('message', (result: DirectCopyResult) => {
      const waiting = this.threads.get(thread);
      this.threads.set(thread, undefined);
      // Idle, a thread must not keep the process alive.
      thread.unref();
      this.idle.push(thread);
      waiting?.resolve(result);
      this.next();
    });
    const lost = () => {
      if (!this.threads.has(thread)) return;
      const waiting = this.threads.get(thread);
      this.threads.delete(thread);
      const at = this.idle.indexOf(thread);
      if (at !== -1) this.idle.splice(at, 1);
      waiting?.resolve({ step: 'lost' });
      this.next();
    };
    thread.on('error', lost);
    thread.on('exit', lost);
    return thread;
  }
}

export const largeCopyScript: WorkerScript = {
  start: () => startWorkerScript(__dirname, 'large-copy.worker'),
};
