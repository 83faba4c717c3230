import { Module } from '@nestjs/common';
import { ClockModule } from '../common/clock';
import { UploadsController } from './uploads.controller';
import { UploadsService } from './uploads.service';

/** Resumable uploads (tus 1.0) on /api/uploads; ContentModule turns finished ones into documents through UploadsService. */
@Module({ imports: [ClockModule], controllers: [UploadsController], providers: [UploadsService], exports: [UploadsService] })
export class UploadsModule {}
