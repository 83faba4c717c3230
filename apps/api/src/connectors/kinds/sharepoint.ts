export { SharePointConnectorModule } from '@gateway/connector-sharepoint';
