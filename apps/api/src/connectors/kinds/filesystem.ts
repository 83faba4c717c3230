export { FilesystemConnectorModule } from '@gateway/connector-filesystem';
