import { unlinkSync } from 'node:fs';

/** The errno code of a Node filesystem error (or SQLite's result code), if any. */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function unlinkIfPresent(file: string): void {
  try {
    unlinkSync(file);
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
}

/** Cleanup after a failure that is already being reported: a second error would only hide the first. */
export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // reported by the caller's error; a leftover temp file is swept after an hour
  }
}
