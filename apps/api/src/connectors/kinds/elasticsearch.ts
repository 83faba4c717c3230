export { ElasticsearchConnectorModule } from '@gateway/connector-elasticsearch';
