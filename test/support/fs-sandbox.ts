import { createHash } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import type { Actor } from '@gateway/connector-api';
import type { FilesystemConnector } from '@gateway/connector-filesystem';
import { FilesystemConnectorType } from '@gateway/connector-filesystem';

/** Shared by the connector's spec files (kept out of src, so never built): a connector on a fresh temporary folder. */

export const alice: Actor = { username: 'alice' };
export const bob: Actor = { username: 'bob' };

export interface Sandbox {
  /** Parent of the root, for files that must stay out of reach. */
  dir: string;
  root: string;
  connector: FilesystemConnector;
  /** A new connector instance on the same root, as after a restart. */
  reopen(): Promise<FilesystemConnector>;
  cleanup(): Promise<void>;
}

export async function sandbox(): Promise<Sandbox> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'fs-connector-')));
  const root = path.join(dir, 'repo');
  const open = async () =>
    (await new FilesystemConnectorType().create(
      { id: 'fs', typeId: 'filesystem', description: 'test', params: { root } },
      { dataDir: dir },
    )) as FilesystemConnector;
  return { dir, root, connector: await open(), reopen: open, cleanup: () => fsp.rm(dir, { recursive: true, force: true }) };
}

export function body(content: string | Buffer): Readable {
  return Readable.from([Buffer.isBuffer(content) ? content : Buffer.from(content)]);
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function readText(stream: Promise<Readable>): Promise<string> {
  return (await readAll(await stream)).toString('utf8');
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Every file under a folder, relative, for "nothing was left behind" checks. */
export async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isDirectory()) out.push(path.relative(dir, path.join(entry.parentPath ?? entry.path, entry.name)));
  }
  return out.sort();
}
