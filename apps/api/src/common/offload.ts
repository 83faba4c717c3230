import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { ByteRange, ContentConnector } from '@gateway/connector-api';
import { Module } from '@nestjs/common';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig, OffloadConfig } from '../config/gateway-config';
import type { DownloadSource, HandOff } from './download';

/** A file on the local disk holding a download's bytes, as a service knows it. */
export interface LocalFile {
  /** 'files' for user files, 'repo/<connectorId>' for documents of a connector: the internal location's name. */
  area: string;
  /** The folder the area maps to; nothing outside it is ever handed to the proxy. */
  root: string;
  /** The file; it may be reached through nothing but real folders below `root`. */
  path: string;
}

/**
 * The download offload (GATEWAY_ACCEL_REDIRECT / GATEWAY_SENDFILE_HEADER): the
 * gateway still authenticates, authorizes, counts and sets every header, and
 * the proxy serves the bytes (sendfile, Range) from an internal location.
 *
 * The file is resolved to its real path (every link followed) and must still lie
 * below the real path of its area's root, and be a regular file; otherwise the
 * gateway serves it itself, as without offload. The proxy's internal locations
 * also refuse links (nginx `disable_symlinks on`), so a link swapped in after this
 * check cannot lead outside either. Names that the proxy could read differently
 * (not printable ASCII once percent-encoded is impossible for X-Sendfile) are
 * likewise served by the gateway.
 */
export class DownloadOffload {
  private readonly realRoots = new Map<string, Promise<string | undefined>>();

  constructor(private readonly config: OffloadConfig | undefined) {}

  get enabled(): boolean {
    return this.config !== undefined;
  }

  /**
   * The header for `file`, after `before` ran (the checks and counting `open` would
   * do); undefined when the gateway must stream the file itself (and `before` did not run).
   */
  async handOff(file: LocalFile, before?: (range?: ByteRange) => Promise<void>, range?: ByteRange): Promise<HandOff | undefined> {
    const config = this.config;
    if (!config) return undefined;
    const relative = await this.relativePath(file);
    if (relative === undefined) return undefined;
    let handOff: HandOff;
    if (config.kind === 'accel-redirect') {
      const uri = `${config.prefix}/${file.area}/${relative.split(path.sep).map(encodeURIComponent).join('/')}`;
      handOff = { header: 'X-Accel-Redirect', value: uri };
    } else {
      const real = path.join((await this.realRoot(file.root))!, relative);
      // mod_xsendfile and lighttpd take the path as it is; a header cannot carry every byte a name may hold.
      if (!/^[\x20-\x7e]+$/.test(real)) return undefined;
      handOff = { header: config.header, value: real };
    }
    if (before) await before(range);
    return handOff;
  }

  /** `file` relative to its root's real path, both links resolved; undefined when it is not a regular file below it. */
  private async relativePath(file: LocalFile): Promise<string | undefined> {
    const root = await this.realRoot(file.root);
    if (root === undefined) return undefined;
    let real: string;
    try {
      real = await fsp.realpath(file.path);
      if (!(await fsp.stat(real)).isFile()) return undefined;
    } catch {
      return undefined;
    }
    const relative = path.relative(root, real);
    if (relative === '' || relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return undefined;
    return relative;
  }

  private realRoot(root: string): Promise<string | undefined> {
    let real = this.realRoots.get(root);
    if (!real) {
      real = fsp.realpath(root).catch(() => {
        this.realRoots.delete(root); // not there yet (user files before the first export): look again next time
        return undefined;
      });
      this.realRoots.set(root, real);
    }
    return real;
  }
}

/** Provides the DownloadOffload built from the configuration (stateless but for its cache of real roots). */
@Module({
  providers: [{ provide: DownloadOffload, inject: [GATEWAY_CONFIG], useFactory: (config: GatewayConfig) => new DownloadOffload(config.offload) }],
  exports: [DownloadOffload],
})
export class OffloadModule {}

/** The offload of a connector's document, when the offload is on and the connector keeps local files. */
export function offloadable(
  offload: DownloadOffload,
  connectorId: string,
  connector: ContentConnector,
  id: string,
  before?: (range?: ByteRange) => Promise<void>,
): DownloadSource['handOff'] {
  const local = connector.localFiles;
  if (!offload.enabled || !local) return undefined;
  return async (range) => offload.handOff({ area: `repo/${connectorId}`, root: local.root, path: await local.localPath(id) }, before, range);
}
