import type { RequestHandler } from 'express';
import { getHeapSpaceStatistics } from 'node:v8';
import { v8Collector, type Collect } from './v8-collector';

/*
 * Gives V8's young generation back when the gateway is idle (issue 16, apps/api/README.md: Idle RSS).
 *
 * Start-up allocates fast enough for V8 to grow new space to its maximum (2 × 16 MiB semi-spaces on
 * 64-bit), and V8 shrinks it only at a scavenge that finds the allocation rate low (its
 * ReduceNewSpaceSize: under ~1 KB/ms over the last few seconds) — and a quiet gateway has no scavenge
 * to run. Capping the semi-spaces on the command line (--max-semi-space-size) made large downloads
 * 2.3 × slower, so the cap is not used: new space grows as V8 likes under traffic, and this asks for
 * one minor collection when the gateway has been quiet since the last look, so that V8 sees the low
 * rate and shrinks it (to 1 MiB). A collection V8 declines to shrink after (the rate was still high)
 * is retried at the next quiet look. A minor collection of a near-empty new space costs well under a
 * millisecond. After traffic, the first quiet look also asks for one full collection: the Buffers of
 * downloads that were promoted to the old generation (their memory is outside V8's heap, 10–15 MB after
 * five 64 MiB downloads) are freed only by one, and V8 may not run one for a long time at idle. A full
 * collection of the gateway's ~30 MB heap takes tens of milliseconds, once per quiet spell.
 *
 * Not V8's full, memory-reducing collection: Node 20's V8 (11.3) has no `flavor: 'last-resort'` for
 * gc(); v8.queryObjects() does run one (and shrinks new space) but walks the whole heap after it
 * (1.3–1.7 s at start-up on a loaded 2-core machine) and prints an experimental-feature warning; an
 * in-process inspector session's HeapProfiler.collectGarbage hung the gateway once in three tries.
 */

/** How often the gateway looks whether it has been quiet. */
export const IDLE_TRIM_INTERVAL_MS = 5_000;
/**
 * New space above this size (V8's space_size: 32 MiB grown to its maximum, 1 MiB shrunk) is worth a
 * collection when quiet. Not 4 MiB: the idle gateway's own timers grew a shrunk new space back to 4 MiB
 * in one run (3 MB of RSS).
 */
export const IDLE_TRIM_NEW_SPACE_BYTES = 2 * 1024 * 1024;


export interface IdleHeapTrimOptions {
  intervalMs?: number;
  /** Size of V8's new space now (bytes). */
  newSpaceBytes?: () => number;
  /** A minor collection; null when the runtime offers none (the trim then does nothing). */
  collect?: Collect | null;
}

/**
 * Counts requests (middleware) and, every interval during which none arrived or were in flight, asks
 * for a minor collection if new space is larger than IDLE_TRIM_NEW_SPACE_BYTES, and for a full one if
 * requests were served since the last.
 */
export class IdleHeapTrim {
  private inFlight = 0;
  private seenSinceLook = false;
  private trafficSinceFull = false;
  private timer: NodeJS.Timeout | undefined;
  private collections = 0;
  private readonly intervalMs: number;
  private readonly newSpaceBytes: () => number;
  private readonly collect: Collect | null;

  constructor(options: IdleHeapTrimOptions = {}) {
    this.intervalMs = options.intervalMs ?? IDLE_TRIM_INTERVAL_MS;
    this.newSpaceBytes = options.newSpaceBytes ?? newSpaceSize;
    this.collect = options.collect !== undefined ? options.collect : v8Collector();
  }

  /** Marks the gateway busy from a request's arrival until its response is closed. */
  middleware(): RequestHandler {
    return (_req, res, next) => {
      this.inFlight++;
      this.seenSinceLook = true;
      this.trafficSinceFull = true;
      res.once('close', () => {
        this.inFlight--;
        this.seenSinceLook = true;
      });
      next();
    };
  }

  /** Starts looking (an unref'd timer: it never keeps the process alive). */
  start(): void {
    if (this.timer || !this.collect) return;
    this.timer = setInterval(() => this.look(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Collections asked for so far. */
  get collected(): number {
    return this.collections;
  }

  /**
   * One look: if quiet since the last look, a minor collection when new space is large, and a full one
   * when requests were served since the last full one.
   */
  look(): void {
    const quiet = !this.seenSinceLook && this.inFlight === 0;
    this.seenSinceLook = false;
    if (!quiet || !this.collect) return;
    if (this.newSpaceBytes() > IDLE_TRIM_NEW_SPACE_BYTES) {
      this.collections++;
      this.collect({ type: 'minor' });
    }
    if (this.trafficSinceFull) {
      this.trafficSinceFull = false;
      this.collections++;
      this.collect({ type: 'major' });
    }
  }
}

function newSpaceSize(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

