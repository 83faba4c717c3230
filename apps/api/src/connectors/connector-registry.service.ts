import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import {
  CONNECTOR_TYPES,
  GatewayError,
  NotFoundError,
  NotSupportedError,
  isContentConnector,
  type Connector,
  type ContentConnector,
  type ConnectorType,
  type SearchConnector,
} from '@gateway/connector-api';
import { settlesWithin } from '@gateway/concurrency';
import { GATEWAY_CONFIG } from '../config/config.module';
import { ConfigError, type GatewayConfig } from '../config/gateway-config';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { instrumentConnector } from '../metrics/instrument-connector';

/** Resolves a connector id to its driver; built once from the config at start-up. */
/** How long a connector's close() may take at shutdown. */
const CLOSE_GRACE_MS = 5_000;

@Injectable()
export class ConnectorRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ConnectorRegistry.name);
  private readonly connectors = new Map<string, Connector>();

  constructor(
    @Inject(CONNECTOR_TYPES) private readonly types: ConnectorType[],
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const byType = new Map(this.types.map((t) => [t.typeId, t]));
    for (const [index, definition] of this.config.connectors.entries()) {
      const type = byType.get(definition.typeId);
      if (!type) {
        throw new ConfigError(
          `connectors[${index}].typeId: unknown connector type '${definition.typeId}' (known: ${[...byType.keys()].join(', ')})`,
        );
      }
      try {
        const driver = await type.create(definition, { dataDir: this.config.dataDir });
        // With metrics on, every driver call is counted and timed here, for every connector kind.
        this.connectors.set(definition.id, this.metrics ? instrumentConnector(driver, this.metrics) : driver);
      } catch (e) {
        if (e instanceof GatewayError && 'parameter' in e) {
          throw new ConfigError(`connectors[${index}].params.${String((e as { parameter: string }).parameter)}: ${e.message}`);
        }
        throw e;
      }
      this.logger.log(`Connector '${definition.id}' (${definition.typeId}) ready`);
    }
  }

  /** A content connector (spec 4.2-4.4 routes); 501 naming `content` for a search-only one. */
  get(id: string): ContentConnector {
    const connector = this.any(id);
    if (!isContentConnector(connector)) throw new NotSupportedError('content', connector.typeId);
    return connector;
  }

  /** A connector with the search group (spec 4.6 routes); 501 naming `search` for a content-only one. */
  searchConnector(id: string): SearchConnector {
    const connector = this.any(id);
    if (!connector.search) throw new NotSupportedError('search', connector.typeId);
    return connector as SearchConnector;
  }

  /** Whatever the connector is (identity, health, capability groups). */
  any(id: string): Connector {
    const connector = this.connectors.get(id);
    if (!connector) throw new NotFoundError('connector', id);
    return connector;
  }

  list(): Connector[] {
    return [...this.connectors.values()];
  }

  /** Each connector gets CLOSE_GRACE_MS to close its clients: one whose engine stopped answering must not hold the shutdown. */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.list().map(async (c) => {
        if (c.close && !(await settlesWithin(c.close(), CLOSE_GRACE_MS))) this.logger.warn(`Connector ${c.id} did not close within ${CLOSE_GRACE_MS} ms; shutting down without it`);
      }),
    );
  }
}
