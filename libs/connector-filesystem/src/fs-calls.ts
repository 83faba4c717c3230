import { unlinkSync } from 'node:fs';

/** The errno code of a Node filesystem error (or SQLite's result code), if any. */
export function errnoCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The errno code of an error from a filesystem call; EIO for one that carries none. */
export function errnoOf(e: unknown): string {
  return errnoCode(e) ?? 'EIO';
}

/** Errors of link() meaning "no hard links here": a staged copy is renamed into place instead. */
export const LINK_UNSUPPORTED: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

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
