import { InvalidArgumentError, type Actor, type PropertyUpdateCapability } from '@gateway/connector-api';
import { checkId, encodeFieldName, GATEWAY_FIELD_NAMES, GATEWAY_FIELDS, SYSTEM_FIELDS } from './drive-items';
import type { GraphConnector } from './graph.connector';

/** The propertyUpdate group: the library's custom columns of a document (listItem fields). */
export class GraphPropertyUpdate implements PropertyUpdateCapability {
  constructor(private readonly connector: GraphConnector) {}

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    if (properties === null || typeof properties !== 'object' || Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one property");
    }
    checkId(id, 'fileId');
    await this.connector.writableDocument(id, actor, 'fileId');
    const fields: Record<string, string | null> = { [GATEWAY_FIELDS.modifiedBy]: actor.username };
    for (const [name, value] of Object.entries(properties)) {
      const field = encodeFieldName(name);
      if (SYSTEM_FIELDS.has(field) || GATEWAY_FIELD_NAMES.has(field) || field.startsWith('_')) {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': a SharePoint column the service maintains`, 'INVALID_PROPERTY');
      }
      fields[field] = value;
    }
    await this.connector.setGatewayFields(id, fields, { parameter: 'properties' });
    return id;
  }
}
