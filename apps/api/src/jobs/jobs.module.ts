import { DynamicModule, Module, type Provider } from '@nestjs/common';
import { JobSchedulesRepository } from '@gateway/persistence';
import type { GatewayConfig } from '../config/gateway-config';
import { ClockModule } from '../common/clock';
import { FilesModule } from '../files/files.module';
import { EmbeddedTaskQueue } from './embedded-task-queue';
import { JobControlService } from './job-control.service';
import { JobDefinitionsService } from './job-definitions.service';
import { JobExecutor } from './job-executor';
import { JobReportService } from './job-report.service';
import { JobScheduler } from './schedule/job-scheduler';
import { JobDefinitionsController, JobServiceController } from './jobs.controllers';
import { TASK_QUEUE } from './task-queue';

/**
 * Copying tasks run at once per process in embedded mode (their documents share GATEWAY_JOB_CONCURRENCY or
 * GATEWAY_JOB_LOCAL_CONCURRENCY). Two docs tasks already offer 2 x DOCS_PER_TASK documents, more
 * than either setting lets run. More tasks only spread the documents in flight over more
 * tasks and folders: each task ends later, the start-up listings interleave, and the copy
 * thread's messages touch more folders. Jobs of 10,000 small files, alternating gateways:
 * 2 slots ~1.0 s, 3 ~1.2 s, 4 ~1.1 s, 8 ~1.15 s, 1 ~1.5 s (docs/decisions/0014-job-task-slots-and-garbage.md).
 */
export const TASK_SLOTS = 2;
/**
 * Listing tasks run at once per process in embedded mode, in a lane of their own (embedded-task-queue.ts).
 * One keeps the listing ahead of the copies: a page of 1,000 names is listed in some 20 ms, copied in some 90.
 */
export const LISTING_SLOTS = 1;

/** The job service: in-process runner by default, BullMQ across processes when REDIS_URL is set. */
@Module({})
export class JobsModule {
  static register(config: GatewayConfig): DynamicModule {
    const common: Provider[] = [JobDefinitionsService, JobControlService, JobExecutor, JobReportService, JobSchedulesRepository, JobScheduler];
    // Run reports are saved as user files.
    const imports = [ClockModule, FilesModule];
    const controllers = [JobDefinitionsController, JobServiceController];
    if (!config.jobs.redisUrl) {
      return {
        module: JobsModule,
        imports,
        controllers,
        providers: [...common, { provide: TASK_QUEUE, useFactory: () => new EmbeddedTaskQueue(TASK_SLOTS, LISTING_SLOTS) }],
      };
    }
    // Required here, not at the top: BullMQ/ioredis cost several MB of idle RSS (docs/decisions/0004)
    // and are only used with REDIS_URL.
    /* eslint-disable @typescript-eslint/no-require-imports -- required on first use, not at load: idle RSS (docs/decisions/0004) */
    const { BullModule } = require('@nestjs/bullmq') as typeof import('@nestjs/bullmq');
    const { BullTaskQueue, JOB_QUEUE, JobTaskProcessor, bullOptions } = require('./bullmq-task-queue') as typeof import('./bullmq-task-queue');
    /* eslint-enable @typescript-eslint/no-require-imports */
    return {
      module: JobsModule,
      imports: [...imports, BullModule.forRoot(bullOptions(config)), BullModule.registerQueue({ name: JOB_QUEUE })],
      controllers,
      providers: [...common, BullTaskQueue, { provide: TASK_QUEUE, useExisting: BullTaskQueue }, JobTaskProcessor],
    };
  }
}
