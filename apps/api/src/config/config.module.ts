import { DynamicModule, Global, Module } from '@nestjs/common';
import type { GatewayConfig } from './gateway-config';

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

/** Makes the validated config, built once in bootstrap, injectable everywhere. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: GATEWAY_CONFIG, useValue: config }],
      exports: [GATEWAY_CONFIG],
    };
  }
}
