import { Module } from '@nestjs/common';
import { AccessAuditModule } from '../audit/access-audit.module';
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
import { LocalUserFileStore, UserFileStore } from './user-file.store';
import { UserFilesService } from './user-files.service';

/**
 * Spec 4.1 (user files, download links, public download) and the two batch
 * forms of 4.2. Import it before ContentModule: BatchController's literal
 * `repo/batch` and `repo/__BATCH__/file` must be registered before
 * `repo/:connectorId/...`.
 */
@Module({
  imports: [ClockModule, OffloadModule, AccessAuditModule],
  controllers: [BatchController, FilesController, PublicDownloadController],
  providers: [
    PublicRateLimitGuard,
    {
      provide: UserFileStore,
      // The S3 store (and with it the AWS SDK) is required only when configured (issue 16: idle RSS).
      useFactory: (config: GatewayConfig) => {
        if (config.files.store.kind !== 's3') return new LocalUserFileStore(config);
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- required on first use, not at load: idle RSS (issue 16)
        const { S3UserFileStore } = require('./s3-user-file.store') as typeof import('./s3-user-file.store');
        return new S3UserFileStore(config.files.store);
      },
      inject: [GATEWAY_CONFIG],
    },
    ExportRunner, UserFilesService, LinksService, ExportsService, FilesSweeper],
  // The job service saves run reports as user files.
  exports: [UserFileStore, LinksService],
})
export class FilesModule {}
