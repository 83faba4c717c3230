import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DownloadLinksRepository, UserFilesRepository, type UserFileRecord } from '@gateway/persistence';
import { Clock } from '../common/clock';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { ExportRunner } from './export-runner';
import { UserFileStore } from './user-file.store';

export interface SweepResult {
  linksRemoved: number;
  filesRemoved: number;
}

/**
 * Every GATEWAY_SWEEP_INTERVAL_SECONDS: removes links that expired more than
 * GATEWAY_EXPIRED_LINK_RETENTION_HOURS ago (until then they answer 410), user
 * files past their `expires` (retention, pushed later by links to them), and
 * the files and links of users that no longer exist.
 */
@Injectable()
export class FilesSweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(FilesSweeper.name);
  private timer?: NodeJS.Timeout;
  private current?: Promise<SweepResult>;

  constructor(
    private readonly files: UserFilesRepository,
    private readonly links: DownloadLinksRepository,
    private readonly store: UserFileStore,
    private readonly runner: ExportRunner,
    private readonly clock: Clock,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  onApplicationBootstrap(): void {
    const interval = this.config.files.sweepIntervalMs;
    if (interval <= 0) return;
    this.timer = setInterval(() => {
      this.sweep().catch((e: unknown) => this.logger.error(`Sweep failed: ${(e as Error)?.message ?? String(e)}`));
    }, interval);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.current?.catch(() => undefined);
  }

  /** One sweep; a call while one runs joins it. */
  sweep(): Promise<SweepResult> {
    this.current ??= this.sweepOnce().finally(() => (this.current = undefined));
    return this.current;
  }

  private async sweepOnce(): Promise<SweepResult> {
    const now = this.clock.now();
    let linksRemoved = await this.links.deleteExpired(now - this.config.files.expiredLinkRetentionMs);
    let filesRemoved = await this.removeAll(() => this.files.listExpired(now));
    // With authentication off there are no user records to compare with.
    if (!this.config.auth.disabled) {
      filesRemoved += await this.removeAll(() => this.files.listOrphaned());
      linksRemoved += await this.links.deleteOrphaned();
    }
    if (linksRemoved + filesRemoved > 0) this.logger.log(`Sweep removed ${filesRemoved} user file(s) and ${linksRemoved} link(s)`);
    return { linksRemoved, filesRemoved };
  }

  /** Removes what `list` finds, page after page, until a page removes nothing. */
  private async removeAll(list: () => Promise<UserFileRecord[]>): Promise<number> {
    let total = 0;
    for (;;) {
      let removed = 0;
      for (const file of await list()) removed += await this.remove(file);
      total += removed;
      if (removed === 0) return total;
    }
  }

  private async remove(file: UserFileRecord): Promise<number> {
    if (file.state === 'running') await this.runner.stop(file.id);
    const deleted = await this.files.delete(file.id, file.owner, { withLinks: false });
    await this.store.remove(file.id);
    return deleted ? 1 : 0;
  }
}
