import { InvalidArgumentError, type Actor, type PropertyDefinition, type PropertyKind, type PropertyUpdateCapability } from '@gateway/connector-api';
import type { CmisTypeDefinition } from './cmis-client';
import type { CmisConnector } from './cmis.connector';
import { gatewayId, isCheckedOut, objectId } from './item-info';

/** The propertyUpdate group: changes checked against the type definition. */
export class CmisPropertyUpdate implements PropertyUpdateCapability {
  /** createFile sends NewFile.properties in createDocument itself (createProperties). */
  readonly propertiesOnCreate = true;

  constructor(private readonly connector: CmisConnector) {}

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    if (properties === null || typeof properties !== 'object' || Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one property");
    }
    const props = await this.connector.writableDocument(id, 'fileId');
    const user = this.connector.userFor(actor);
    const holding = isCheckedOut(props) ? (this.connector.assertHolder(props, user), true) : false;
    const type = await this.connector.typeOf(props, true);
    const changes: Record<string, string | string[] | null> = {};
    for (const [name, value] of Object.entries(properties)) {
      const definition = type.propertyDefinitions?.[name];
      if (!definition) throw new InvalidArgumentError(name, `Invalid parameter '${name}': not a property of type '${type.id}'`, 'INVALID_PROPERTY');
      if (definition.updatability === 'whencheckedout' && !holding) {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': it can only be changed while the document is checked out`, 'INVALID_PROPERTY');
      }
      if (definition.updatability !== 'readwrite' && definition.updatability !== 'whencheckedout') {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': the property is read-only`, 'INVALID_PROPERTY');
      }
      changes[name] = convertValue(name, value, definition.propertyType, definition.cardinality === 'multi');
    }
    const target = holding ? await this.connector.ownWorkingCopy(props, user, id) : objectId(props);
    await this.connector.client.updateProperties(target, changes, { as: user, id, parameter: 'properties' });
    return gatewayId(props);
  }

  /** The type definition's properties; writable means `readwrite` (a job does not check documents out, so `whencheckedout` is not). */
  async describeProperties(type?: string): Promise<PropertyDefinition[]> {
    const definition = await this.connector.typeOf({ 'cmis:objectTypeId': type ?? this.connector.params.documentType }, true);
    return Object.values(definition.propertyDefinitions ?? {}).map((p) => ({
      name: p.id,
      kind: KINDS[p.propertyType] ?? 'string',
      multiValue: p.cardinality === 'multi',
      writable: p.updatability === 'readwrite',
      ...(typeof p.maxLength === 'number' && p.maxLength > 0 ? { maxLength: p.maxLength } : {}),
    }));
  }
}

/**
 * createDocument's own properties from NewFile.properties, checked against the type definition as
 * updateProperties checks them (settable when created: `readwrite` and `oncreate`; a new document is not
 * checked out, so `whencheckedout` is refused). An empty value sets nothing.
 */
export function createProperties(type: CmisTypeDefinition, properties: Record<string, string> | undefined): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (properties === undefined) return out;
  if (properties === null || typeof properties !== 'object') throw new InvalidArgumentError('properties', "Invalid parameter 'properties': must be a map of property names to values");
  for (const [name, value] of Object.entries(properties)) {
    const definition = type.propertyDefinitions?.[name];
    if (!definition) throw new InvalidArgumentError(name, `Invalid parameter '${name}': not a property of type '${type.id}'`, 'INVALID_PROPERTY');
    if (name === 'cmis:name' || name === 'cmis:objectTypeId') throw new InvalidArgumentError(name, `Invalid parameter '${name}': set by fileName and type`, 'INVALID_PROPERTY');
    if (definition.updatability !== 'readwrite' && definition.updatability !== 'oncreate') {
      throw new InvalidArgumentError(name, `Invalid parameter '${name}': the property cannot be set when the document is created`, 'INVALID_PROPERTY');
    }
    const converted = convertValue(name, value, definition.propertyType, definition.cardinality === 'multi');
    if (converted !== null) out[name] = converted;
  }
  return out;
}

/** CMIS property types as kinds (id, uri, html are strings). */
const KINDS: Record<string, PropertyKind> = { integer: 'number', decimal: 'number', boolean: 'boolean', datetime: 'date' };

/** A property value as the browser binding wants it; '' unsets the property. */
function convertValue(name: string, value: string, propertyType: string, multi: boolean): string | string[] | null {
  if (typeof value !== 'string') throw new InvalidArgumentError(name, `Invalid parameter '${name}': a property value must be a string`, 'INVALID_PROPERTY');
  if (value === '') return null;
  const values = multi ? value.split(',').map((v) => v.trim()) : [value];
  const converted = values.map((v) => {
    switch (propertyType) {
      case 'integer':
        if (!/^-?\d+$/.test(v)) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be an integer`, 'INVALID_PROPERTY');
        return v;
      case 'decimal':
        if (v.trim() === '' || !Number.isFinite(Number(v))) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be a number`, 'INVALID_PROPERTY');
        return String(Number(v));
      case 'boolean':
        if (v !== 'true' && v !== 'false') throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be true or false`, 'INVALID_PROPERTY');
        return v;
      case 'datetime': {
        const ms = /^-?\d+$/.test(v) ? Number(v) : Date.parse(v);
        if (!Number.isFinite(ms)) throw new InvalidArgumentError(name, `Invalid parameter '${name}': must be an ISO 8601 date-time or epoch milliseconds`, 'INVALID_PROPERTY');
        return String(ms);
      }
      default:
        return v;
    }
  });
  return multi ? converted : converted[0];
}
