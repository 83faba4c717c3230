/**
 * What is added during one event-loop turn, handed over together once that turn's I/O callbacks
 * have run (setImmediate): the filesystem connector's record commits and its copy thread's
 * messages both group the work of every document that got this far in the same turn. With
 * `maxItems`, a batch that reaches it is handed over at once: a consumer working beside the event
 * loop (the copy thread) starts on the first of many items while the turn goes on adding more.
 */
export class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(
    private readonly take: (items: T[]) => void,
    private readonly maxItems = Infinity,
  ) {}

  add(item: T): void {
    this.items.push(item);
    if (this.items.length >= this.maxItems) {
      // The scheduled turn hands over what is added after this, if anything.
      const items = this.items;
      this.items = [];
      this.take(items);
      return;
    }
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
