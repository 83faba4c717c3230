import { Global, Inject, Injectable, Logger, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import { GATEWAY_CONFIG } from '../config/config.module';
import type { GatewayConfig } from '../config/gateway-config';
import { GatewayMetrics } from './gateway-metrics';

/**
 * GET /metrics in the Prometheus text format, on GATEWAY_METRICS_PORT only: a listener of its
 * own, so the API's port (the one the proxy forwards) never serves it, and no route, guard or
 * envelope of the API applies to it. Anything but GET /metrics answers 404.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MetricsServer.name);
  private server?: Server;

  constructor(
    private readonly metrics: GatewayMetrics,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const port = this.config.metricsPort!;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
        return;
      }
      this.metrics.text().then(
        (text) => res.writeHead(200, { 'Content-Type': this.metrics.registry.contentType }).end(text),
        (e: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${String(e)}\n`),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.config.host, () => resolve());
    });
    this.server = server;
    this.logger.log(`Metrics at http://${this.config.host}:${port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Present only with GATEWAY_METRICS_PORT: then GatewayMetrics can be injected (as optional) everywhere. */
@Global()
@Module({})
export class MetricsModule {
  static register(config: GatewayConfig) {
    if (config.metricsPort === undefined) return { module: MetricsModule };
    return { module: MetricsModule, providers: [GatewayMetrics, MetricsServer], exports: [GatewayMetrics] };
  }
}
