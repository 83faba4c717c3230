import type { Worker } from 'node:worker_threads';
import { startWorkerScript } from '@gateway/concurrency';
import { ServiceBusyError } from '@gateway/errors';

export interface Argon2Params {
  /** KiB of memory per hash. */
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

/** What a password thread (password.worker.ts) is asked, and what it answers. */
export type PasswordTask = { op: 'verify'; hash: string; password: string } | { op: 'hash'; password: string; params: Argon2Params };
export type PasswordAnswer = { result: boolean | string; error?: undefined } | { error: string };

interface Pending {
  task: PasswordTask;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
  /** Ends the thread once it has been idle for idleMs. */
  retire?: NodeJS.Timeout;
}

/**
 * A bounded pool of worker threads for argon2 (password.worker.ts, which calls it synchronously: the
 * asynchronous argon2 APIs run on libuv's shared pool, where four threads also serve every file read, and a
 * login flood there stalls downloads): `threads` run at once, `queueLimit` wait; one more is refused with
 * ServiceBusyError (503, Retry-After) at once, so a login flood costs at most threads × memoryCost of memory
 * and threads of CPU, whatever its size. Not piscina: it starts its threads itself, from a file name, which
 * under ts-jest is TypeScript a thread cannot load; startWorkerScript starts each of the gateway's threads,
 * compiled or from the sources, the one way.
 */
export class PasswordPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  constructor(
    private readonly threads: number,
    private readonly queueLimit: number,
    private readonly retryAfterSeconds = 1,
    /**
     * An idle thread ends after this long: each holds a V8 isolate and argon2's memory (~5 MB), and
     * logins are rare once the verification cache has them (the start-up admin hash left one idle
     * for good). A login after that starts a thread again (tens of ms, beside argon2's own cost).
     */
    private readonly idleMs = 10_000,
  ) {}

  verify(hash: string, password: string): Promise<boolean> {
    return this.run({ op: 'verify', hash, password }) as Promise<boolean>;
  }

  hash(password: string, params: Argon2Params): Promise<string> {
    return this.run({ op: 'hash', password, params }) as Promise<string>;
  }

  /** Threads running now, busy or idle. */
  get liveThreads(): number {
    return this.slots.length;
  }

  /** Tasks waiting for a thread. */
  get queued(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const slot of this.slots) clearTimeout(slot.retire);
    for (const p of this.queue.splice(0)) p.reject(new Error('The password pool is closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private run(task: PasswordTask): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('The password pool is closed'));
    return new Promise((resolve, reject) => {
      const pending: Pending = { task, resolve, reject };
      const slot = this.freeSlot();
      if (slot) return this.dispatch(slot, pending);
      if (this.queue.length >= this.queueLimit) {
        reject(new ServiceBusyError('Too many logins are being verified; retry shortly', this.retryAfterSeconds));
        return;
      }
      this.queue.push(pending);
    });
  }

  private freeSlot(): Slot | undefined {
    const idle = this.slots.find((s) => !s.busy);
    if (idle) return idle;
    if (this.slots.length >= this.threads) return undefined;
    const slot: Slot = { worker: this.spawn() };
    this.slots.push(slot);
    return slot;
  }

  private spawn(): Worker {
    const worker = startWorkerScript(__dirname, 'password.worker');
    // Idle workers must not keep a finished process (a CLI, a test) alive.
    worker.unref();
    worker.on('message', (msg: PasswordAnswer) => {
      const slot = this.slots.find((s) => s.worker === worker);
      const pending = slot?.busy;
      if (!slot || !pending) return;
      slot.busy = undefined;
      if (msg.error !== undefined) pending.reject(new Error(msg.error));
      else pending.resolve(msg.result);
      this.next(slot);
    });
    const lost = (error: Error) => {
      const index = this.slots.findIndex((s) => s.worker === worker);
      if (index < 0) return;
      const [slot] = this.slots.splice(index, 1);
      slot.busy?.reject(error);
      // A worker that died is replaced on the next task; one waiting now gets a fresh thread.
      const waiting = this.queue.shift();
      if (waiting && !this.closed) {
        const fresh = this.freeSlot();
        if (fresh) this.dispatch(fresh, waiting);
        else this.queue.unshift(waiting);
      }
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`password worker exited with code ${code}`)));
    return worker;
  }

  private dispatch(slot: Slot, pending: Pending): void {
    clearTimeout(slot.retire);
    slot.busy = pending;
    slot.worker.ref();
    slot.worker.postMessage(pending.task);
  }

  private next(slot: Slot): void {
    const waiting = this.queue.shift();
    if (waiting) return this.dispatch(slot, waiting);
    slot.worker.unref();
    slot.retire = setTimeout(() => this.retire(slot), this.idleMs);
    slot.retire.unref();
  }

  private retire(slot: Slot): void {
    const index = this.slots.indexOf(slot);
    if (index < 0 || slot.busy) return;
    // Out of the list first: its exit is then not a lost worker.
    this.slots.splice(index, 1);
    void slot.worker.terminate();
  }
}
