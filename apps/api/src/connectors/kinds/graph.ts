export { GraphConnectorModule } from '@gateway/connector-graph';
