import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { TurnBatch } from '@gateway/concurrency';
import type { DirectCopyRequest, DirectCopyAnswer } from './direct-copy';

/**
 * The thread that makes direct copies' system calls (direct-copy.ts), one per process, shared by
 * every filesystem connector. Why a thread of its own and not libuv's pool: a document copied
 * between two filesystem connectors costs some twenty calls (lstats of the path, open, the kernel
 * copy, link, unlink, ...). Made on the event loop (lookups) and in the pool (the copy, one round
 * trip each), a job of 10,000 small documents kept the main thread busy ~290 µs per document, the
 * pool round trip alone ~50 µs of it (waking a pool thread on a busy 2-core machine preempts the
 * loop). Here the requests made in one turn of the event loop go over as one message, and the
 * answers come back a few at a time (direct-copy.worker.ts): the main thread keeps the job's
 * bookkeeping, this thread the calls and the new documents' records (direct-copy-records.ts),
 * both cores work. It holds no state but its connections to the targets' record databases: a
 * crash of the thread fails the copies in flight (answered `lost`) and the next copy starts a
 * new thread.
 */
/** Requests per message at most (see `queued`): some 5 ms of the thread's work, a few dozen µs of the event loop's. */
const SEND_EVERY = 64;

export class DirectCopyThread {
  private worker?: Worker;
  private readonly waiting = new Map<number, (result: DirectCopyAnswer) => void>();
  /**
   * The requests of this turn go together, up to SEND_EVERY at a time: a job task hands out up to
   * GATEWAY_JOB_LOCAL_CONCURRENCY documents in one turn, and with the rest of that turn (the next
   * task's claim, outcomes) the first message waited ~30 ms while this thread had nothing to do.
   */
  private readonly queued = new TurnBatch<[number, DirectCopyRequest]>((batch) => this.send(batch), SEND_EVERY);
  private nextId = 0;

  constructor(private readonly script: WorkerScript) {}

  copy(request: DirectCopyRequest): Promise<DirectCopyAnswer> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.waiting.set(id, resolve);
      this.queued.add([id, request]);
    });
  }

  /**
   * A connector instance closed its records: the thread closes its connection to them, after the
   * copies sent before (messages are handled in order). No thread, nothing to close.
   */
  forget(recordsKey: string): void {
    // Copies queued this turn go first, or the thread would open the connection again after closing it.
    this.queued.flush();
    this.worker?.postMessage({ close: recordsKey });
  }

  private send(batch: Array<[number, DirectCopyRequest]>): void {
    const thread = this.thread();
    thread.ref();
    thread.postMessage(batch);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = this.script.start();
    // Idle, the thread must not keep the process alive (it is ref'd while copies wait).
    worker.unref();
    worker.on('message', (answers: Array<[number, DirectCopyAnswer]>) => {
      for (const [id, result] of answers) this.answer(id, result);
    });
    const lost = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      // What the thread had is answered `lost` (the documents fail, a job's run-errors redoes them);
      // what is still queued goes to the next thread.
      const queued = new Set(this.queued.pending.map(([id]) => id));
      for (const id of [...this.waiting.keys()]) if (!queued.has(id)) this.answer(id, { step: 'lost' });
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.worker = worker;
    return worker;
  }

  private answer(id: number, result: DirectCopyAnswer): void {
    const resolve = this.waiting.get(id);
    if (!resolve) return;
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker?.unref();
    resolve(result);
  }
}

/** How the thread is started: the compiled script, or under ts-jest the TypeScript source through ts-node. */
export interface WorkerScript {
  start(): Worker;
}

export const directCopyScript: WorkerScript = {
  start() {
    const compiled = path.join(__dirname, 'direct-copy.worker.js');
    if (existsSync(compiled)) return new Worker(compiled);
    const source = path.join(__dirname, 'direct-copy.worker.ts');
    return new Worker(`require('ts-node').register({ transpileOnly: true }); require(${JSON.stringify(source)});`, { eval: true });
  },
};
