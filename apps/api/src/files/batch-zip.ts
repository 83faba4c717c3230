import type { Archiver, EntryData } from 'archiver';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { GatewayError, InvalidArgumentError } from '@gateway/connector-api';
import type { EntryRead } from '../audit/access-audit.service';
import type { ConnectorRegistry } from '../connectors/connector-registry.service';
import { useNativeCrc32ForArchiver } from './native-crc32';
import { EntryNames, sanitizeEntryName } from './zip-entry-names';

let archiverModule: typeof import('archiver') | undefined;

/**
 * archiver (and its zip engine) is required on the first export, not at start-up: it is ~3 MB of
 * idle RSS for a feature many gateways never use (issue 16).
 */
function loadArchiver(): typeof import('archiver') {
  if (archiverModule === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first export, not at load: idle RSS (decision 0004)
    archiverModule = require('archiver') as typeof import('archiver');
    // Every entry's CRC-32 through zlib instead of JavaScript (see native-crc32.ts).
    useNativeCrc32ForArchiver();
  }
  return archiverModule;
}

/** One requested document: where it lives and the name it gets in the zip. */
export interface BatchEntry {
  /** Position in the request (POST) or the x of id<x> (GET form); errors.txt names it. */
  index: number;
  connId: string;
  id: string;
  /** Empty or absent: the document's own name. */
  fileName?: string;
}

/** An entry whose document is looked up and open, its name in the zip claimed; or the errors.txt line saying why not. */
type PreparedEntry =
  | { entry: BatchEntry; source: Readable; name: string; path: string; size?: number; modified?: Date; earlyError: () => unknown }
  | { entry: BatchEntry; failure: string };

/**
 * The next document is opened once the current one has at most this much
 * left to copy (at once when it is that small): the open overlaps the copy,
 * and an opened stream (an HTTP response, for a remote repository) never
 * waits long for its turn.
 */
const OPEN_AHEAD_BYTES = 4 * 1024 * 1024;

export interface BatchProgress {
  entriesDone: number;
  bytesDone: number;
  errorCount: number;
}

/** Written last, only when some entry failed; no entry may take its name. */
export const ERRORS_ENTRY = 'errors.txt';

/** Why a zip stopped before it was finalised (a stop, a shutdown, the reader going away). */
export class BatchHaltedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BatchHaltedError';
  }
}

/**
 * Builds one zip from repository documents, streaming: one document at a
 * time flows through with backpressure into `archive`, whatever reads
 * `archive` (a file, an HTTP response) sets the pace. Meanwhile the next
 * document is looked up, and opened (not read) near the end of the current
 * one (OPEN_AHEAD_BYTES), so the per-document round trips overlap the
 * copying instead of adding up; at most two documents are open. Memory does
 * not grow with document sizes or counts.
 *
 * A failing entry never fails the zip: unknown connector, missing document,
 * an upstream error while opening it all become a line of errors.txt. A
 * document whose stream breaks after some bytes leaves a truncated entry,
 * which errors.txt says. Only the archive itself failing (its reader gone,
 * the disk full) or `halt` ends the build early, and then run() rejects.
 */
export class BatchZip {
  readonly archive: Archiver;
  readonly progress: BatchProgress = { entriesDone: 0, bytesDone: 0, errorCount: 0 };
  private readonly names = new EntryNames([ERRORS_ENTRY]);
  private readonly halted = new AbortController();
  private haltReason: Error = new BatchHaltedError('stopped');
  private finalizing = false;
  /** The access audit: told how each document entry's read ended. */
  private readonly onEntryRead?: (read: EntryRead) => void;

  constructor(
    private readonly registry: ConnectorRegistry,
    private readonly entries: readonly BatchEntry[],
    options: { level: number; signal?: AbortSignal; onEntryRead?: (read: EntryRead) => void },
  ) {
    this.onEntryRead = options.onEntryRead;
    // STORE (level 0) copies bytes as they are; deflate levels 1-9 trade CPU for size.
    this.archive = loadArchiver()('zip', options.level === 0 ? { store: true } : { zlib: { level: options.level } });
    this.archive.on('warning', () => undefined);
    this.archive.on('error', (e: Error) => this.halt(e));
    this.archive.once('close', () => {
      if (!this.finalizing) this.halt(new BatchHaltedError('The zip was closed before it was complete'));
    });
    const signal = options.signal;
    if (signal?.aborted) this.halt(new BatchHaltedError('stopped'));
    signal?.addEventListener('abort', () => this.halt(new BatchHaltedError('stopped')), { once: true });
  }

  /** Stops the build: the open document is closed and run() rejects with `reason`. */
  halt(reason: Error): void {
    if (this.halted.signal.aborted) return;
    this.haltReason = reason;
    this.halted.abort();
  }

  /** Appends every entry in order, then errors.txt when needed, then finalises the archive. */
  async run(): Promise<BatchProgress> {
    const errors: string[] = [];
    let next: Promise<PreparedEntry> | undefined;
    let letNextOpen: () => void = () => undefined;
    const prepareAhead = (i: number) => {
      let allow: () => void = () => undefined;
      const mayOpen = new Promise<void>((resolve) => (allow = resolve));
      letNextOpen = allow;
      next = i < this.entries.length ? this.prepare(this.entries[i], mayOpen) : undefined;
      next?.catch(() => undefined); // awaited in the next turn; a halt meanwhile must not go unhandled
    };
    try {
      this.throwIfHalted();
      prepareAhead(0);
      letNextOpen();
      for (let i = 0; i < this.entries.length; i++) {
        const prepared = await next!;
        next = undefined;
        if (this.halted.signal.aborted) {
          if ('source' in prepared) prepared.source.destroy();
          this.throwIfHalted();
        }
        // Names are claimed in prepare(), after the one before has claimed its own: request order.
        prepareAhead(i + 1);
        if ('failure' in prepared) letNextOpen();
        const failure = 'failure' in prepared ? prepared.failure : await this.addPrepared(prepared, letNextOpen);
        if (failure !== undefined) {
          errors.push(failure);
          this.progress.errorCount++;
        }
        this.progress.entriesDone++;
      }
    } finally {
      // Halted with a document opened ahead: close it once it is there.
      const pending: Promise<PreparedEntry> | undefined = next;
      pending?.then((p) => ('source' in p ? p.source.destroy() : undefined), () => undefined);
    }
    this.throwIfHalted();
    if (errors.length > 0) {
      const text = Buffer.from(errors.join('\n') + '\n', 'utf8');
      await this.append(bufferStream(text), { name: ERRORS_ENTRY, date: new Date() });
      this.throwIfHalted();
    }
    this.finalizing = true;
    // Resolves when the archive's last byte is produced; the consumer's own stream tells when it is stored.
    this.archive.finalize().catch(() => undefined);
    return { ...this.progress };
  }

  private throwIfHalted(): void {
    if (this.halted.signal.aborted) throw this.haltReason;
  }

  /**
   * `work`, unless the build halts first: then it rejects at once, so a
   * repository that never answers cannot hold up a stop or a shutdown.
   * A result that arrives after that goes to `late` (to close a stream).
   */
  private untilHalted<T>(work: Promise<T>, late?: (value: T) => void): Promise<T> {
    const signal = this.halted.signal;
    return new Promise<T>((resolve, reject) => {
      const onHalt = () => {
        work.then((v) => late?.(v), () => undefined);
        reject(this.haltReason);
      };
      if (signal.aborted) return onHalt();
      signal.addEventListener('abort', onHalt, { once: true });
      work.then(
        (v) => {
          signal.removeEventListener('abort', onHalt);
          if (signal.aborted) return; // already rejected; onHalt handed v to `late`
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onHalt);
          reject(e);
        },
      );
    });
  }

  /**
   * Looks the entry's document up, opens it once `mayOpen` says so and claims
   * its name; a failure becomes its errors.txt line.
   */
  private async prepare(entry: BatchEntry, mayOpen: Promise<void>): Promise<PreparedEntry> {
    try {
      const connector = this.registry.get(entry.connId);
      const item = await this.untilHalted(connector.getItem(entry.id));
      if (item.baseType !== 'document') {
        throw new InvalidArgumentError('id', `'${entry.id}' is a folder; only documents can be put in a zip`, 'NOT_A_DOCUMENT');
      }
      await this.untilHalted(mayOpen);
      const source = await this.untilHalted(connector.openContent(entry.id), (late) => late.destroy());
      // Nobody reads it until the entry before it is done: keep a failure meanwhile for append().
      let earlyError: unknown;
      source.on('error', (e: unknown) => (earlyError ??= e));
      const name = this.names.claim(sanitizeEntryName(entry.fileName) || sanitizeEntryName(item.name) || `document-${entry.index}`);
      return { entry, source, name, path: item.path, size: item.size, modified: item.modified, earlyError: () => earlyError };
    } catch (e) {
      this.throwIfHalted();
      return { entry, failure: errorLine(entry, e) };
    }
  }

  /** Appends an opened document (`nearEnd` when it has little left); returns the errors.txt line when its stream broke. */
  private async addPrepared(prepared: Extract<PreparedEntry, { source: Readable }>, nearEnd: () => void): Promise<string | undefined> {
    const { entry, name } = prepared;
    const { bytes, error } = await this.append(prepared.source, { name, date: prepared.modified ?? new Date() }, {
      earlyError: prepared.earlyError,
      size: prepared.size,
      nearEnd,
    });
    this.onEntryRead?.({
      connectorId: entry.connId,
      documentId: entry.id,
      path: prepared.path,
      bytes,
      // Halted: the zip's reader went away, or the export was stopped or interrupted.
      result: this.halted.signal.aborted ? 'cut' : error !== undefined ? 'error' : 'complete',
    });
    this.throwIfHalted();
    if (error !== undefined) return errorLine(entry, error, `the entry '${name}' in this zip is incomplete (${bytes} bytes written)`);
    return undefined;
  }

  /**
   * Streams `source` into the archive as one entry and resolves once the
   * archive has taken all of it. The source goes through a counter that never
   * fails, so a broken source ends its entry early instead of breaking the zip.
   * A document entry (`document` given) counts as progress and calls
   * `nearEnd` once at most OPEN_AHEAD_BYTES of its `size` are left (at the
   * latest when it ends); `earlyError` tells why a source that was already
   * destroyed when its turn came failed.
   */
  private append(
    source: Readable,
    data: EntryData,
    document?: { size?: number; nearEnd: () => void; earlyError: () => unknown },
  ): Promise<{ bytes: number; error?: unknown }> {
    return new Promise((resolve) => {
      let bytes = 0;
      let error: unknown;
      let settled = false;
      const progress = this.progress;
      const size = document?.size;
      let nearEnd = document?.nearEnd;
      const callNearEnd = () => {
        nearEnd?.();
        nearEnd = undefined;
      };
      if (size !== undefined && size <= OPEN_AHEAD_BYTES) callNearEnd();
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          bytes += chunk.length;
          if (document) progress.bytesDone += chunk.length;
          if (nearEnd && size !== undefined && size - bytes <= OPEN_AHEAD_BYTES) callNearEnd();
          callback(null, chunk);
        },
      });
      const endEarly = (e: unknown) => {
        if (error !== undefined) return;
        error = e;
        source.unpipe(counter);
        counter.end();
      };
      const onSourceError = (e: unknown) => endEarly(e);
      const onSourceClose = () => {
        if (!source.readableEnded) endEarly(new Error('the document stream closed before its end'));
      };
      const onEntry = () => finish();
      const onHalt = () => {
        source.destroy();
        counter.destroy();
        finish();
      };
      const finish = () => {
        if (settled) return;
        settled = true;
        callNearEnd();
        source.off('error', onSourceError);
        source.off('close', onSourceClose);
        this.archive.off('entry', onEntry);
        this.halted.signal.removeEventListener('abort', onHalt);
        resolve({ bytes, error });
      };
      if (this.halted.signal.aborted) return onHalt();
      source.on('error', onSourceError);
      source.once('close', onSourceClose);
      // Entries are appended one at a time, so the next 'entry' event is this one.
      this.archive.once('entry', onEntry);
      this.halted.signal.addEventListener('abort', onHalt, { once: true });
      source.pipe(counter);
      this.archive.append(counter, data);
      // Failed or closed while it waited its turn: 'error' and 'close' have been and gone.
      if (source.destroyed) endEarly(document?.earlyError() ?? new Error('the document stream closed before its end'));
    });
  }
}

function bufferStream(buffer: Buffer): Readable {
  const stream = new PassThrough();
  stream.end(buffer);
  return stream;
}

/** One line of errors.txt: which entry, then the error's code and message. */
function errorLine(entry: BatchEntry, e: unknown, prefix?: string): string {
  const code = e instanceof GatewayError ? e.code : 'ERROR';
  const message = ((e as Error)?.message ?? String(e)).replace(/[\r\n]+/g, ' ').slice(0, 500);
  const what = `[${entry.index}] connId=${JSON.stringify(entry.connId)} id=${JSON.stringify(entry.id)} fileName=${JSON.stringify(entry.fileName ?? '')}`;
  return `${what}: ${code}: ${prefix ? `${prefix}: ` : ''}${message}`;
}
