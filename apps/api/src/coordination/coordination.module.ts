import { Global, Module } from '@nestjs/common';
import { Coordination } from './coordination.service';

/** State shared between the gateway's nodes (Redis when REDIS_URL is set); see its README. */
@Global()
@Module({ providers: [Coordination], exports: [Coordination] })
export class CoordinationModule {}
