import { MessageChannel, type Worker } from 'node:worker_threads';
import { TurnBatch } from '@gateway/concurrency';
import type { DirectCopyRequest, DirectCopyAnswer } from './direct-copy';
import { startWorkerScript } from '@gateway/concurrency';

/**
 * The thread that makes direct copies' system calls (direct-copy.ts), one per process, shared by
 * every filesystem connector. Why a thread of its own and not libuv's pool: a document copied
 * between two filesystem connectors costs some twenty calls (lstats of the path, open, the kernel
 * copy, link, unlink, ...). Made on the event loop (lookups) and in the pool (the copy, one round
 * trip each), a job of 10,000 small documents kept the main thread busy ~290 µs per document, the
 * pool round trip alone ~50 µs of it (waking a pool thread on a busy 2-core machine preempts the
 * loop). Here the requests made in one turn of the event loop go over as one message, and the
 * answers come back a few at a time (direct-copy.worker.ts): the main thread keeps the job's
 * bookkeeping, this thread the calls. The new documents' records (direct-copy-records.ts) are
 * written by a second thread, which the copy thread starts and hands each group of placed
 * documents; it answers here, on a port of its own, once their records are committed. The threads
 * hold no state but their connections to the targets' record databases: a crash of either fails
 * the copies in flight (answered `lost`) and the next copy starts new threads.
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
    const { port1: answers, port2 } = new MessageChannel();
    worker.postMessage({ answers: port2 }, [port2]);
    const take = (group: Array<[number, DirectCopyAnswer]>) => {
      for (const [id, result] of group) this.answer(id, result);
    };
    answers.on('message', take);
    // Idle, the thread must not keep the process alive (it is ref'd while copies wait); the port never
    // does (unref'd after on('message'), which refs it).
    worker.unref();
    answers.unref();
    const lost = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      answers.close();
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

/** How the copy thread is started (the tests give stand-ins); its first message is the port the answers come back on. */
export interface WorkerScript {
  start(): Worker;
}

export const directCopyScript: WorkerScript = {
  start: () => startWorkerScript(__dirname, 'direct-copy.worker'),
};
