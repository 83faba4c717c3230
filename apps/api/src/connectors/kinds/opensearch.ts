export { OpenSearchConnectorModule } from '@gateway/connector-opensearch';
