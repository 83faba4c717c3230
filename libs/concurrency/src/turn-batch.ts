/**
 * What is added during one event-loop turn, handed over together once that turn's I/O callbacks
 * have run (setImmediate): the filesystem connector's record commits and its copy thread's
 * messages both group the work of every document that got this far in the same turn.
 */
export class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly take: (items: T[]) => void) {}

  add(item: T): void {
    this.items.push(item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** What was added and not handed over yet. */
  get pending(): readonly T[] {
    return this.items;
  }

  /** Hands over what was added now (also called by the scheduled turn; nothing added: nothing handed). */
  flush(): void {
    this.scheduled = false;
    const items = this.items;
    this.items = [];
    if (items.length > 0) this.take(items);
  }
}
