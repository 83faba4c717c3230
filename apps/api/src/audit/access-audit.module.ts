import { Module } from '@nestjs/common';
import { AccessAuditController } from './access-audit.controller';
import { AccessAuditService } from './access-audit.service';

/**
 * The access audit: AccessAuditService records (the download paths call it), the admin route reads.
 * Not global: its shutdown hook must run before the database (a global module) closes.
 */
@Module({ controllers: [AccessAuditController], providers: [AccessAuditService], exports: [AccessAuditService] })
export class AccessAuditModule {}
