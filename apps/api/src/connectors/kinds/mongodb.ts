export { MongoConnectorModule } from '@gateway/connector-mongodb';
