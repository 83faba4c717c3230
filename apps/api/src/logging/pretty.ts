import pino from 'pino';

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Shown in a line's own place, not as key=value. */
const PLACED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'context', 'err', 'reqId', 'user', 'method', 'path', 'status', 'bytes', 'ms']);

type Entry = Record<string, unknown>;

/** A value of a log entry as text: a string as it is, anything else as its JSON. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * One readable line for one JSON log entry (LOG_FORMAT=pretty, README.md). A request's line reads
 * `10:42:07.120Z INFO  POST /api/admin/users 201 412 B 9 ms admin req=3f2…`; any other entry
 * `10:42:07.120Z INFO  [Context] message key=value`, and an error's stack follows on its own lines.
 */
export function prettyLine(entry: Entry): string {
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11) : '';
  const level = (LEVEL_NAMES[entry.level as number] ?? String(entry.level)).padEnd(5);
  const parts = [time, level];
  if (typeof entry.method === 'string' && typeof entry.status === 'number') {
    parts.push(entry.method, text(entry.path), text(entry.status), `${text(entry.bytes)} B`, `${text(entry.ms)} ms`);
    if (entry.user !== undefined) parts.push(text(entry.user));
  } else {
    if (entry.context !== undefined) parts.push(`[${text(entry.context)}]`);
    if (entry.msg !== undefined) parts.push(text(entry.msg));
  }
  if (entry.reqId !== undefined) parts.push(`req=${text(entry.reqId)}`);
  for (const [key, value] of Object.entries(entry)) {
    if (!PLACED.has(key)) parts.push(`${key}=${text(value)}`);
  }
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  const detail = err === undefined ? '' : `\n${text(err.stack ?? err.message ?? err)}`;
  return parts.join(' ') + detail;
}

/** A pino destination that writes prettyLine() of each entry to stdout, synchronously like pino's own. */
export function prettyDestination(out: { write(text: string): unknown } = pino.destination({ dest: 1, sync: true })): pino.DestinationStream {
  return { write: (line: string) => void out.write(`${prettyLine(JSON.parse(line) as Entry)}\n`) };
}
