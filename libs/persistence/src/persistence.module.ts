import { DynamicModule, Global, Inject, Module, OnApplicationShutdown, type FactoryProvider } from '@nestjs/common';
import { openDatabase, type Database, type DatabaseOptions } from './database';
import { DATABASE } from './tokens';
import { UsersRepository } from './users.repository';
import { UserFilesRepository } from './user-files.repository';
import { DownloadLinksRepository } from './download-links.repository';
import { JobsRepository } from './jobs.repository';
import { JobSyncStateRepository } from './job-sync-state.repository';
import { JobSyncFeedRepository } from './job-sync-feed.repository';
import { AccessAuditRepository } from './access-audit.repository';
import { WebhooksRepository } from './webhooks.repository';

@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** `options` is resolved by the app from its validated config. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Nest's own FactoryProvider: the arguments are whatever `inject` names
  static forRootAsync(options: { useFactory: (...args: any[]) => DatabaseOptions; inject?: FactoryProvider['inject'] }): DynamicModule {
    return {
      module: PersistenceModule,
      providers: [
        {
          provide: DATABASE,
          useFactory: async (...args: unknown[]) => openDatabase(options.useFactory(...args)),
          inject: options.inject ?? [],
        },
        UsersRepository,
        UserFilesRepository,
        DownloadLinksRepository,
        JobsRepository,
        JobSyncStateRepository,
        JobSyncFeedRepository,
        WebhooksRepository,
        AccessAuditRepository,
      ],
      exports: [DATABASE, UsersRepository, UserFilesRepository, DownloadLinksRepository, JobsRepository, JobSyncStateRepository, JobSyncFeedRepository, WebhooksRepository, AccessAuditRepository],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}
