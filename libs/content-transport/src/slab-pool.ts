/**
 * Reusable read memory for lent reads (lent-body.ts): slabs
 * that reads go into window by window, whose chunks are lent to a reader and handed back once written.
 * A slab is read into again once it is retired (full, or its connection done) and every chunk cut from
 * it came back; until then it stays out of the pool, and a slab whose chunks never come back is
 * garbage like any buffer. One pool per window size (plain TCP and TLS read differently).
 */
export interface Slab {
  bytes: Buffer;
  /** Bytes read into the slab so far; the next window starts here. */
  used: number;
  /** Chunks of this slab handed out and not yet returned. */
  lent: number;
  /** No more reads go into it; it is spare once `lent` is 0. */
  retired: boolean;
}

export class SlabPool {
  private readonly spare: Slab[] = [];

  /** `spareSlabs`: slabs kept for the next reads, process-wide (what the transfers in flight need). */
  constructor(
    readonly slabBytes: number,
    private readonly spareSlabs: number,
  ) {}

  /** A spare slab, or a new one. */
  take(): Slab {
    const slab = this.spare.pop() ?? { bytes: Buffer.allocUnsafeSlow(this.slabBytes), used: 0, lent: 0, retired: false };
    slab.used = 0;
    slab.lent = 0;
    slab.retired = false;
    return slab;
  }

  /** No read goes into `slab` any more. */
  retire(slab: Slab): void {
    slab.retired = true;
    this.spareIfFree(slab);
  }

  /** One chunk of `slab` came back from its reader. */
  returned(slab: Slab): void {
    slab.lent--;
    this.spareIfFree(slab);
  }

  /** How many slabs wait in the pool (for tests). */
  get spareCount(): number {
    return this.spare.length;
  }

  private spareIfFree(slab: Slab): void {
    if (slab.retired && slab.lent === 0 && this.spare.length < this.spareSlabs && !this.spare.includes(slab)) this.spare.push(slab);
  }
}
