import { Module } from '@nestjs/common';
import { AccessAuditModule } from '../audit/access-audit.module';
import { OffloadModule } from '../common/offload';
import { UploadsModule } from '../uploads/uploads.module';
import { ContentController } from './content.controller';
import { ContentService } from './content.service';

/** Spec 4.2, the content service, over whichever connector the path names. */
@Module({ imports: [OffloadModule, AccessAuditModule, UploadsModule], controllers: [ContentController], providers: [ContentService] })
export class ContentModule {}
