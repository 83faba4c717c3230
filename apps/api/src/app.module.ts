import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import * as path from 'node:path';
import { PersistenceModule } from '@gateway/persistence';
import { TextExtractionModule } from '@gateway/text-extraction';
import { AdminModule } from './admin/admin.module';
import { AuthModule } from './auth/auth.module';
import { GatewayExceptionFilter } from './common/exception.filter';
import { ConfigModule, GATEWAY_CONFIG } from './config/config.module';
import type { GatewayConfig } from './config/gateway-config';
import { ConnectionsModule } from './connections/connections.module';
import { ConnectorsModule } from './connectors/connectors.module';
import { ContentModule } from './content/content.module';
import { CoordinationModule } from './coordination/coordination.module';
import { FilesModule } from './files/files.module';
import { HealthModule } from './health/health.module';
import { JobsModule } from './jobs/jobs.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { PermissionsModule } from './permissions/permissions.module';
import { SearchModule } from './search/search.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { UploadsModule } from './uploads/uploads.module';

@Module({})
export class AppModule {
  static register(config: GatewayConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        MetricsModule.register(config),
        PersistenceModule.forRootAsync({
          inject: [GATEWAY_CONFIG],
          useFactory: (c: GatewayConfig) => ({
            databaseUrl: c.databaseUrl,
            sqliteFile: path.join(c.dataDir, 'gateway.sqlite'),
            connectTimeoutMs: c.server.databaseConnectTimeoutMs,
            queryTimeoutMs: c.server.databaseQueryTimeoutMs,
          }),
        }),
        ConnectorsModule,
        CoordinationModule,
        AuthModule,
        AdminModule,
        ConnectionsModule,
        FilesModule, // before ContentModule: its literal repo/ routes must win over repo/:connectorId
        ContentModule,
        UploadsModule,
        PermissionsModule,
        SearchModule,
        HealthModule,
        TextExtractionModule.forRoot(config.extraction),
        JobsModule.register(config),
        WebhooksModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: GatewayExceptionFilter },
      ],
    };
  }
}
