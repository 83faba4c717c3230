import { DynamicModule, Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { openDatabase, type Database, type DatabaseOptions } from './database';
import { DATABASE } from './tokens';
import { UsersRepository } from './users.repository';
import { UserFilesRepository } from './user-files.repository';
import { DownloadLinksRepository } from './download-links.repository';
import { JobsRepository } from './jobs.repository';

@Global()
@Module({})
export class PersistenceModule implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** `options` is resolved by the app from its validated config. */
  static forRootAsync(options: { useFactory: (...args: any[]) => DatabaseOptions; inject?: any[] }): DynamicModule {
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
      ],
      exports: [DATABASE, UsersRepository, UserFilesRepository, DownloadLinksRepository, JobsRepository],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}
