import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { createServer } from 'node:http';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { json, urlencoded, type RequestHandler } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { eventLoopBudget } from '@gateway/concurrency';
import { Logger as PinoLogger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { bodyParserErrors } from './common/body-parser-errors';
import { answerClientErrors } from './common/client-errors';
import { envelope } from './common/envelope';
import { completeOpenApi } from './common/openapi-completion';
import { RawBodyRoutes } from './common/raw-body';
import { securityHeaders } from './common/security-headers';
import { bodyDepthLimit, MethodTable, requireParsedBodyType, strictUtf8Url, uploadLimit } from './common/request-guards';
import { createValidationPipe } from './common/validation';
import { loadConfig, type GatewayConfig, type ServerTimeouts } from './config/gateway-config';
import { UsersService } from './auth/users.service';
import { startUpSummary } from './logging/start-up-summary';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { httpMetrics } from './metrics/http-metrics';

export interface GatewayApp {
  app: NestExpressApplication;
  config: GatewayConfig;
  openApi: OpenAPIObject;
}

/**
 * Builds the application exactly as production runs it: prefix, proxy trust,
 * body limits, pipes, filter, OpenAPI and user provisioning. Tests call this too.
 */
export async function createGatewayApp(config: GatewayConfig = loadConfig()): Promise<GatewayApp> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), new GatewayExpressAdapter(config.server), {
    bufferLogs: true,
    bodyParser: false,
    abortOnError: false,
  });
  app.useLogger(app.get(PinoLogger));
  app.set('trust proxy', config.trustProxy);
  app.disable('x-powered-by');
  // First, so every request is counted, those the parsers refuse included.
  if (config.metricsPort !== undefined) app.use(httpMetrics(app.get(GatewayMetrics), config.contextPath));
  // Hostile requests are refused before routing (common/request-guards.ts, issue 16).
  const methods = new MethodTable();
  app.use(strictUtf8Url);
  app.use(methods.middleware());
  app.use(
    securityHeaders({
      // The API answers JSON and attachments; the one HTML page is the OpenAPI UI, whose scripts and
      // styles are files of its own (self) apart from inline styles, and whose logo is a data: URL.
      contentSecurityPolicy: { directives: { 'img-src': ["'self'", 'data:'], 'style-src': ["'self'", "'unsafe-inline'"], 'upgrade-insecure-requests': null } },
      // Plain HTTP behind a TLS-terminating proxy is the common set-up; HSTS belongs to that proxy.
      strictTransportSecurity: false,
    }),
  );
  // JSON and form bodies only; file content is streamed by the routes that take it
  // (marked @RawBody), whatever its media type, so those routes are skipped.
  const rawBodyRoutes = new RawBodyRoutes();
  const unlessRawBody = (parser: RequestHandler): RequestHandler => (req, res, next) => (rawBodyRoutes.matches(req) ? next() : parser(req, res, next));
  const onlyRawBody = (handler: RequestHandler): RequestHandler => (req, res, next) => (rawBodyRoutes.matches(req) ? handler(req, res, next) : next());
  app.use(onlyRawBody(uploadLimit(config.maxUploadBytes)));
  app.use(unlessRawBody(json({ limit: config.jsonBodyLimit })));
  app.use(unlessRawBody(urlencoded({ extended: false, limit: config.jsonBodyLimit })));
  app.use(bodyParserErrors);
  app.use(unlessRawBody(requireParsedBodyType));
  app.use(bodyDepthLimit);
  const globalPrefix = `${config.contextPath}/api`.replace(/^\//, '');
  app.setGlobalPrefix(globalPrefix);
  app.useGlobalPipes(createValidationPipe());

  const openApi = buildOpenApi(app, config);
  methods.load(openApi, config.contextPath);
  SwaggerModule.setup(`${config.contextPath}/api/docs`, app, openApi, {
    jsonDocumentUrl: `${config.contextPath}/api/docs-json`,
    customSiteTitle: 'Content Gateway API',
  });

  await app.init();
  rawBodyRoutes.collect(app, globalPrefix);
  await app.get(UsersService).provision();
  return { app, config, openApi };
}

/**
 * Largest request head (request line and headers) the server reads. Node's default, 16 KiB, is
 * less than the query strings the API documents: one 4096-character id of non-ASCII characters is
 * up to 48 KiB once percent-encoded, and was refused with a bare 431 (and a reset connection when
 * a body followed) before the gateway could answer. Heads beyond this get a 431 in the gateway's
 * error format (common/client-errors.ts).
 */
export const MAX_REQUEST_HEAD_BYTES = 64 * 1024;

class GatewayExpressAdapter extends ExpressAdapter {
  constructor(private readonly timeouts: ServerTimeouts) {
    super();
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) return super.initHttpServer(options);
    const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs } = this.timeouts;
    const server = createServer(
      {
        maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        // Node checks the two time-outs above only this often (default 30 s): a short headersTimeout
        // would otherwise let a slowloris client hold its connection up to 30 s longer.
        connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeoutMs / 4))),
      },
      // Each request's handling starts in a turn with budget left (issue 16: event-loop delay under load).
      dispatchWithinBudget(this.getInstance()),
    );
    server.keepAliveTimeout = keepAliveTimeoutMs;
    // Heads Node refuses (over maxHeaderSize, too slow, malformed) get a complete answer in the gateway's error format.
    answerClientErrors(server, MAX_REQUEST_HEAD_BYTES);
    this.setHttpServer(server);
  }

  /** Every handler's result is written here: in the spec's envelope (common/envelope.ts says why here). */
  override reply(response: unknown, body: unknown, statusCode?: number): unknown {
    return super.reply(response, envelope(body), statusCode);
  }
}

/**
 * The request listener, started through the process's event-loop budget (@gateway/concurrency
 * turn-budget.ts): libuv hands over every socket that is ready in one poll phase, and under 200
 * connections running each request's middleware chain there made turns of over a second. The head is
 * parsed as before; the handling (routing, guards, the handler up to its first real I/O) waits for a
 * turn with budget left, in order of arrival. A body waits in the socket meanwhile (backpressure).
 */
export function dispatchWithinBudget(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => eventLoopBudget.defer(() => handler(req, res));
}

function buildOpenApi(app: NestExpressApplication, config: GatewayConfig): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Content Gateway')
    .setDescription(
      'One authenticated REST service in front of content repositories and search engines. ' +
        'Every JSON answer is `{ success, results }`; errors are `{ success: false, message, error: { code, ... } }` ' +
        'with a real HTTP status. All routes but `/api/public/*` and `/api/health*` need HTTP Basic credentials.',
    )
    .setVersion('0.1.0')
    .addBasicAuth()
    .addServer(config.contextPath || '/');
  const document = SwaggerModule.createDocument(app, builder.build());
  // Paths are documented as the spec writes them (/api/...); the context prefix lives in the server URL.
  if (config.contextPath) {
    document.paths = Object.fromEntries(
      Object.entries(document.paths).map(([p, item]) => [p.startsWith(config.contextPath + '/') ? p.slice(config.contextPath.length) : p, item]),
    );
  }
  completeOpenApi(document, app);
  return document;
}

/** Starts listening and wires graceful shutdown: in-flight requests finish, then the process exits. */
export async function bootstrap(config: GatewayConfig = loadConfig()): Promise<GatewayApp> {
  const gateway = await createGatewayApp(config);
  const { app } = gateway;
  await app.listen(config.port, config.host);
  const logger = app.get(PinoLogger);
  const listening: Server = app.getHttpServer();
  for (const line of startUpSummary(config, listening.address())) logger.log(line, 'Gateway');

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: finishing in-flight requests`);
    const server: Server = app.getHttpServer();
    const force = setTimeout(() => {
      logger.warn(`Shutdown grace of ${config.shutdownGraceMs} ms passed: closing remaining connections`);
      server.closeAllConnections();
    }, config.shutdownGraceMs);
    force.unref();
    app
      .close()
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        logger.error(e);
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return gateway;
}
