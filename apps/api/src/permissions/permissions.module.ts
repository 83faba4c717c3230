import { Module } from '@nestjs/common';
import { PermissionsController } from './permissions.controller';
import { PermissionsService } from './permissions.service';

/** Spec 4.3, permission management, over the `acls` capability group. */
@Module({ controllers: [PermissionsController], providers: [PermissionsService] })
export class PermissionsModule {}
