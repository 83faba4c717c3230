/**
 * The injection token under which each connector lib's Nest module
 * (`libs/connector-<kind>/src/<kind>-connector.module.ts`) provides its ConnectorType. The gateway's
 * registry loads the modules of the configured kinds only and reads the type from each (README, Registration).
 */
export const CONNECTOR_TYPE = Symbol('CONNECTOR_TYPE');
