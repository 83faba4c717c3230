/** Names per run: a run's strings (~2.5 MB) live only until it is sorted and packed. */
const RUN_LENGTH = 65_536;

/**
 * A directory's names in the order Array.prototype.sort gives them (UTF-16 code units, which the
 * listing cursor compares with), held compactly for a listing that lasts as long as the client reads.
 * Names are taken in runs: each run is sorted and packed into one Buffer (UTF-8, each name ended by
 * NUL, which no file name contains), and the runs are merged as the names are asked for. A million
 * names take ~10 MB of Buffer this way; as strings in one sorted array they took ~24 MB plus the
 * sort's work arrays, kept in the old generation for the whole listing.
 */
export class SortedNameRuns {
  private readonly runs: Buffer[] = [];
  private run: string[] = [];

  constructor(private readonly runLength = RUN_LENGTH) {}

  add(name: string): void {
    this.run.push(name);
    if (this.run.length >= this.runLength) this.seal();
  }

  /** Every name after `after` (every name without it), in order. */
  *namesAfter(after?: string): Generator<string> {
    this.seal();
    const heads = this.runs.map((run) => new RunReader(run, after)).filter((head) => head.name !== undefined);
    while (heads.length > 0) {
      // Few runs (one per 65,536 names): a scan for the smallest head is cheaper than a heap.
      let least = 0;
      for (let i = 1; i < heads.length; i++) if (heads[i].name! < heads[least].name!) least = i;
      yield heads[least].name!;
      if (heads[least].advance() === undefined) heads.splice(least, 1);
    }
  }

  private seal(): void {
    if (this.run.length === 0) return;
    this.run.sort();
    this.runs.push(Buffer.from(this.run.join('\0') + '\0'));
    this.run = [];
  }
}

/** One packed run read name by name, from its first name after `after`. */
class RunReader {
  name: string | undefined;
  private at = 0;

  constructor(
    private readonly run: Buffer,
    after: string | undefined,
  ) {
    this.advance();
    while (after !== undefined && this.name !== undefined && this.name <= after) this.advance();
  }

  advance(): string | undefined {
    if (this.at >= this.run.length) return (this.name = undefined);
    const end = this.run.indexOf(0, this.at);
    this.name = this.run.toString('utf8', this.at, end);
    this.at = end + 1;
    return this.name;
  }
}
