import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional, type DynamicModule, type Type } from '@nestjs/common';
import { LazyModuleLoader } from '@nestjs/core';
import {
  CONNECTOR_TYPE,
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

/** typeId → the loader of the Nest module that provides that kind's ConnectorType under CONNECTOR_TYPE. */
export type ConnectorModules = Readonly<Record<string, () => Promise<Type | DynamicModule>>>;
/** The token of the ConnectorModules the registry knows (connectors.module.ts lists the gateway's). */
export const CONNECTOR_MODULES = Symbol('CONNECTOR_MODULES');

/** How long a connector's close() may take at shutdown. */
const CLOSE_GRACE_MS = 5_000;

/** Resolves a connector id to its driver; built once from the config at start-up. */
@Injectable()
export class ConnectorRegistry implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ConnectorRegistry.name);
  private readonly connectors = new Map<string, Connector>();

  constructor(
    @Inject(CONNECTOR_MODULES) private readonly kinds: ConnectorModules,
    private readonly lazyModules: LazyModuleLoader,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Optional() private readonly metrics?: GatewayMetrics,
  ) {}

  async onModuleInit(): Promise<void> {
    for (const [index, definition] of this.config.connectors.entries()) {
      const type = await this.connectorType(definition.typeId, `connectors[${index}].typeId`);
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

  /** The kind's module is loaded (its lib required) on its first configured connector; Nest keeps loaded modules. */
  private async connectorType(typeId: string, parameter: string): Promise<ConnectorType> {
    if (!Object.hasOwn(this.kinds, typeId)) {
      throw new ConfigError(`${parameter}: unknown connector type '${typeId}' (known: ${Object.keys(this.kinds).join(', ')})`);
    }
    const kindModule = await this.lazyModules.load(this.kinds[typeId]);
    return kindModule.get<ConnectorType>(CONNECTOR_TYPE);
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
