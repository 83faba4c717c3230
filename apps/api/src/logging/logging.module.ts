import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { GatewayConfig } from '../config/gateway-config';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Structured JSON logs (pino) with a request id; credentials never reach the log. */
@Module({})
export class LoggingModule {
  static forRoot(config: GatewayConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          // Nest 11's router wants a named wildcard; the module's default '*' logs a warning at start.
          forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
          pinoHttp: {
            level: config.logLevel,
            genReqId: (req: IncomingMessage, res: ServerResponse) => {
              const incoming = req.headers['x-request-id'];
              const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
              res.setHeader('X-Request-Id', id);
              return id;
            },
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
          },
        }),
      ],
    };
  }
}
