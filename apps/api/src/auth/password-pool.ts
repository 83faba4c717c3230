import { Worker } from 'node:worker_threads';
import { ServiceBusyError } from '@gateway/errors';

export interface Argon2Params {
  /** KiB of memory per hash. */
  memoryCost: number;
  timeCost: number;
  parallelism: number;
}

type Task = { op: 'verify'; hash: string; password: string } | { op: 'hash'; password: string; params: Argon2Params };

interface Pending {
  task: Task;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  busy?: Pending;
}

/*
 * The worker's whole program. It calls argon2 *synchronously* (@node-rs/argon2's verifySync/hashSync), so a
 * verification occupies this worker thread only: the asynchronous argon2 APIs (the `argon2` package's and
 * @node-rs/argon2's) run on libuv's shared thread pool, where four threads also serve every file read, and
 * a login flood there stalls downloads. Given as source (eval) so the same pool runs from the TypeScript
 * sources under jest and from the build, with no worker file to place.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const argon2 = require(workerData.argon2);
parentPort.on('message', (task) => {
  try {
    const result = task.op === 'verify'
      ? argon2.verifySync(task.hash, task.password)
      : argon2.hashSync(task.password, { algorithm: 2, ...task.params });
    parentPort.postMessage({ result });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});
`;

/**
 * A bounded pool of worker threads for argon2: `threads` run at once, `queueLimit` wait; one more is refused
 * with ServiceBusyError (503, Retry-After) at once, so a login flood costs at most threads × memoryCost of
 * memory and threads of CPU, whatever its size. Written on node:worker_threads rather than piscina because
 * piscina loads its task from a file path, which the TypeScript sources run by jest do not have.
 */
export class PasswordPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;

  constructor(
    private readonly threads: number,
    private readonly queueLimit: number,
    private readonly retryAfterSeconds = 1,
  ) {}

  verify(hash: string, password: string): Promise<boolean> {
    return this.run({ op: 'verify', hash, password }) as Promise<boolean>;
  }

  hash(password: string, params: Argon2Params): Promise<string> {
    return this.run({ op: 'hash', password, params }) as Promise<string>;
  }

  /** Tasks waiting for a thread. */
  get queued(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new Error('The password pool is closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private run(task: Task): Promise<unknown> {
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
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { argon2: require.resolve('@node-rs/argon2') } });
    // Idle workers must not keep a finished process (a CLI, a test) alive.
    worker.unref();
    worker.on('message', (msg: { result?: unknown; error?: string }) => {
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
    slot.busy = pending;
    slot.worker.ref();
    slot.worker.postMessage(pending.task);
  }

  private next(slot: Slot): void {
    const waiting = this.queue.shift();
    if (waiting) return this.dispatch(slot, waiting);
    slot.worker.unref();
  }
}
