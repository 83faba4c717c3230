import { DynamicModule, Inject, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Logger, PARAMS_PROVIDER_TOKEN, PinoLogger, type Params } from 'nestjs-pino';
import pino from 'pino';
import { pinoHttp, type HttpLogger } from 'pino-http';
import type { GatewayConfig } from '../config/gateway-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The token of the request-logging middleware (pino-http), applied to every route by LoggingModule. */
const HTTP_LOGGER = Symbol('HTTP_LOGGER');

/**
 * Structured JSON logs (pino) with a request id; credentials never reach the log. One pino
 * logger writes everything: the request lines (pino-http, carrying the request id) and what
 * services log through Nest's Logger (nestjs-pino's adapter). See README.md for why no
 * request context follows the code a request runs (no AsyncLocalStorage).
 */
@Module({})
export class LoggingModule implements NestModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    const root = pino({
      level: config.logLevel,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["proxy-authorization"]',
          'res.headers["set-cookie"]',
          'password',
          '*.password',
          'body.password',
        ],
        censor: '[redacted]',
      },
    });
    const params: Params = { pinoHttp: { logger: root } };
    const http = pinoHttp({
      logger: root,
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const incoming = req.headers['x-request-id'];
        const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // The query string can carry public download keys: log the path only.
      serializers: {
        req: (req: { id: string; method: string; url: string; remoteAddress?: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          path: req.url.split('?')[0],
          remoteAddress: req.remoteAddress,
          headers: req.headers,
        }),
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      autoLogging: { ignore: (req) => (req.url ?? '').endsWith('/api/health') },
    });
    return {
      module: LoggingModule,
      global: true,
      providers: [{ provide: PARAMS_PROVIDER_TOKEN, useValue: params }, PinoLogger, Logger, { provide: HTTP_LOGGER, useValue: http }],
      exports: [Logger],
    };
  }

  constructor(@Inject(HTTP_LOGGER) private readonly http: HttpLogger) {}

  configure(consumer: MiddlewareConsumer): void {
    // Nest 11's router wants a named wildcard.
    consumer.apply(this.http).forRoutes({ path: '{*path}', method: RequestMethod.ALL });
  }
}
