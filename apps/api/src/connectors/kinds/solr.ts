export { SolrConnectorModule } from '@gateway/connector-solr';
