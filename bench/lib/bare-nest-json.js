'use strict';
// The reference of bench/request-overhead.js: a bare Nest 11 + Express app with one controller
// answering GET <BENCH_ROUTE> with the JSON in BENCH_BODY_FILE (read once at start), Nest's default
// logger, nothing else: what the framework alone costs for the gateway's smallest authenticated answer.
require('reflect-metadata');
const fs = require('node:fs');
const { Module, Controller, Get } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');

const body = JSON.parse(fs.readFileSync(process.env.BENCH_BODY_FILE, 'utf8'));
const route = process.env.BENCH_ROUTE.replace(/^\//, '');

class JsonController {
  answer() {
    return body;
  }
}
Controller()(JsonController);
Get(route)(JsonController.prototype, 'answer', Object.getOwnPropertyDescriptor(JsonController.prototype, 'answer'));

class AppModule {}
Module({ controllers: [JsonController] })(AppModule);

async function main() {
  const app = await NestFactory.create(AppModule);
  await app.listen(Number(process.env.PORT), '127.0.0.1');
}
main();
