import { DynamicModule, Inject, Injectable, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { Logger, PARAMS_PROVIDER_TOKEN, PinoLogger, type Params } from 'nestjs-pino';
import pino from 'pino';
import type { GatewayConfig } from '../config/gateway-config';
import { prettyDestination } from './pretty';
import { requestLogger } from './request-logger';

export { requestLogger };

/** The token of the request-logging middleware (request-logger.ts), applied to every route by LoggingModule. */
const HTTP_LOGGER = Symbol('HTTP_LOGGER');

/** Nest's start-up detail (a line per module and per route mapped): debug, not info (README.md). */
const START_UP_DETAIL = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** nestjs-pino's adapter for Nest's Logger, with Nest's start-up detail moved down to debug. */
@Injectable()
export class GatewayLogger extends Logger {
  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams[optionalParams.length - 1];
    if (typeof context === 'string' && START_UP_DETAIL.has(context)) this.debug(message, ...optionalParams);
    else super.log(message, ...optionalParams);
  }
}

/**
 * Logs pino writes, as JSON lines or one readable line each (LOG_FORMAT); credentials never reach
 * them. One pino logger writes everything: a line per request (request-logger.ts, request-line.ts) and
 * what services log through Nest's Logger (nestjs-pino's adapter). See README.md for why no
 * request context follows the code a request runs (no AsyncLocalStorage).
 */
@Module({})
export class LoggingModule implements NestModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    const pretty = (config.logFormat ?? (process.stdout.isTTY ? 'pretty' : 'json')) === 'pretty';
    const options: pino.LoggerOptions = {
      level: config.logLevel,
      redact: {
        // Request lines carry no headers; these cover any other object logged with its headers.
        paths: ['*.headers.authorization', '*.headers.cookie', '*.headers["proxy-authorization"]', '*.headers["set-cookie"]', 'password', '*.password', 'body.password'],
        censor: '[redacted]',
      },
    };
    const root = pretty ? pino(options, prettyDestination()) : pino(options);
    const params: Params = { pinoHttp: { logger: root } };
    const http = requestLogger(root);
    return {
      module: LoggingModule,
      global: true,
      providers: [
        { provide: PARAMS_PROVIDER_TOKEN, useValue: params },
        PinoLogger,
        { provide: Logger, useClass: GatewayLogger },
        { provide: HTTP_LOGGER, useValue: http },
      ],
      exports: [Logger],
    };
  }

  constructor(@Inject(HTTP_LOGGER) private readonly http: ReturnType<typeof requestLogger>) {}

  configure(consumer: MiddlewareConsumer): void {
    // Nest 11's router wants a named wildcard.
    consumer.apply(this.http).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
