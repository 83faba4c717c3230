import { Test } from '@nestjs/testing';
import { CONNECTOR_TYPE, type ConnectorType } from '@gateway/connector-api';
import { GATEWAY_CONFIG } from '../../apps/api/src/config/config.module';
import type { GatewayConfig } from '../../apps/api/src/config/gateway-config';
import { CONNECTOR_MODULES, ConnectorRegistry, type ConnectorModules } from '../../apps/api/src/connectors/connector-registry.service';
import { GATEWAY_CONNECTOR_MODULES } from '../../apps/api/src/connectors/connectors.module';

/** The given types as connector kinds: one Nest module each, providing it as the libs' modules do. */
export function kindsOf(types: ConnectorType[]): ConnectorModules {
  return Object.fromEntries(
    types.map((type) => [type.typeId, async () => ({ module: class TestConnectorModule {}, providers: [{ provide: CONNECTOR_TYPE, useValue: type }] })]),
  );
}

/** A registry started as the gateway starts it (Nest's LazyModuleLoader loading each configured kind), over the gateway's kinds or the given ones. */
export async function startConnectorRegistry(config: GatewayConfig, kinds: ConnectorModules = GATEWAY_CONNECTOR_MODULES): Promise<ConnectorRegistry> {
  const testing = await Test.createTestingModule({
    providers: [ConnectorRegistry, { provide: CONNECTOR_MODULES, useValue: kinds }, { provide: GATEWAY_CONFIG, useValue: config }],
  }).compile();
  await testing.init();
  return testing.get(ConnectorRegistry);
}
