import { Module } from '@nestjs/common';
import { ClockModule } from '../common/clock';
import { OffloadModule } from '../common/offload';
import { BatchController } from './batch.controller';
import { ExportRunner } from './export-runner';
import { ExportsService } from './exports.service';
import { FilesController } from './files.controller';
import { FilesSweeper } from './files-sweeper';
import { LinksService } from './links.service';
import { PublicDownloadController } from './public-download.controller';
import { PublicRateLimitGuard } from './public-rate-limit.guard';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { S3UserFileStore } from './s3-user-file.store';
import { LocalUserFileStore, UserFileStore } from './user-file.store';
import { UserFilesService } from './user-files.service';

/**
 * Spec 4.1 (user files, download links, public download) and the two batch
 * forms of 4.2. Import it before ContentModule: BatchController's literal
 * `repo/batch` and `repo/__BATCH__/file` must be registered before
 * `repo/:connectorId/...`.
 */
@Module({
  imports: [ClockModule, OffloadModule],
  controllers: [BatchController, FilesController, PublicDownloadController],
  providers: [
    PublicRateLimitGuard,
    {
      provide: UserFileStore,
      useFactory: (config: GatewayConfig) => (config.files.store.kind === 's3' ? new S3UserFileStore(config.files.store) : new LocalUserFileStore(config)),
      inject: [GATEWAY_CONFIG],
    },
    ExportRunner, UserFilesService, LinksService, ExportsService, FilesSweeper],
})
export class FilesModule {}
