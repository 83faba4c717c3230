'use strict';
// The reference of bench/idle-rss.js: an empty Nest 11 application (one module, one
// controller, Express adapter) started the same way as the gateway, so the ratio shows
// only what the gateway adds on top of the framework.
require('reflect-metadata');
const { Module, Controller, Get } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

class HealthController {
  health() {
    return { status: 'ok' };
  }
}
Controller('api')(HealthController);
Get('health')(HealthController.prototype, 'health', Object.getOwnPropertyDescriptor(HealthController.prototype, 'health'));

class AppModule {}
Module({ controllers: [HealthController] })(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: ['warn', 'error'] });
  await app.listen(Number(process.env.PORT), process.env.HOST || '127.0.0.1');
}
main();
