import { readFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import { errnoCode } from './fs-calls';

/**
 * Who writes the temp files in `.gateway/tmp/`: each process records itself in `owners/<prefix>`,
 * so the start-up sweep (MetadataStore) can tell a dead process's partial uploads from a live
 * one's on the same machine.
 */

export const OWNER_PREFIX = /^[0-9a-f]{16}$/;
export const TEMP_FILE = /^\d+-([0-9a-f]{16})-/;

/** Who writes the temp files of one prefix: enough to tell, on the same machine, whether it still runs. */
export interface TempOwner {
  pid: number;
  host: string;
  /** Changes with every boot (Linux); absent elsewhere. */
  bootId?: string;
  /** The process's start time in clock ticks since boot (Linux), so a reused pid is not mistaken for it. */
  started?: string;
}

export type OwnerState = 'alive' | 'dead' | 'unknown';

export function currentOwner(): TempOwner {
  return { pid: process.pid, host: os.hostname(), bootId: bootId(), started: processStart(process.pid) };
}

export function ownerState(owner: TempOwner | undefined): OwnerState {
  if (owner === undefined || owner.host !== os.hostname()) return 'unknown';
  const boot = bootId();
  if (owner.bootId !== undefined && boot !== undefined && owner.bootId !== boot) return 'dead';
  // Another prefix with our own pid: an earlier process of this pid namespace (a container restarted).
  if (owner.pid === process.pid) return 'dead';
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    if (errnoCode(e) === 'ESRCH') return 'dead';
  }
  if (owner.started !== undefined) {
    const started = processStart(owner.pid);
    if (started !== undefined && started !== owner.started) return 'dead';
  }
  return 'alive';
}

export async function readOwner(file: string): Promise<TempOwner | undefined> {
  try {
    const owner = JSON.parse(await fsp.readFile(file, 'utf8')) as TempOwner;
    return typeof owner?.pid === 'number' && typeof owner.host === 'string' ? owner : undefined;
  } catch {
    return undefined;
  }
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

function processStart(pid: number): string | undefined {
  try {
    // Field 22 of /proc/<pid>/stat; the command name (field 2) may hold spaces, so count from its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
