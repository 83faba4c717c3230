export { CmisConnectorModule } from '@gateway/connector-cmis';
