import { InvalidArgumentError, type Actor, type PropertyDefinition, type PropertyKind, type PropertyUpdateCapability } from '@gateway/connector-api';
import { ATTRIBUTION_FIELDS } from '@gateway/microsoft-client';
import { fileId } from './ids';
import { expanded, str, type Json } from './odata';
import type { SharePointConnector } from './sharepoint.connector';

/** The hidden fields that keep the acting gateway user: never properties a client sets. */
export const ATTRIBUTION = new Set<string>(Object.values(ATTRIBUTION_FIELDS));

/** The propertyUpdate group: the library's custom columns of a file. */
export class SharePointPropertyUpdate implements PropertyUpdateCapability {
  constructor(private readonly connector: SharePointConnector) {}

  async updateProperties(id: string, properties: Record<string, string>, actor: Actor): Promise<string> {
    if (properties === null || typeof properties !== 'object' || Object.keys(properties).length === 0) {
      throw new InvalidArgumentError('properties', "Invalid parameter 'properties': give at least one property");
    }
    const { spId, file } = await this.connector.fileOf(id, 'fileId');
    this.connector.assertWritable(file, actor, id);
    let state = await this.connector.list();
    const changes: Record<string, string | null> = {};
    for (const [name, value] of Object.entries(properties)) {
      if (typeof value !== 'string') throw new InvalidArgumentError(name, `Invalid parameter '${name}': a property value must be a string`, 'INVALID_PROPERTY');
      let internal = state.fields.get(name.toLowerCase());
      if (!internal) {
        // A field added to the library since the connector started.
        await this.connector.loadFields(state);
        internal = state.fields.get(name.toLowerCase());
      }
      if (!internal || ATTRIBUTION.has(internal)) {
        throw new InvalidArgumentError(name, `Invalid parameter '${name}': not a column of the library '${state.title}'`, 'INVALID_PROPERTY');
      }
      changes[internal] = value === '' ? null : value;
    }
    state = await this.connector.list();
    const fields = (expanded(file, 'ListItemAllFields') as Json | undefined) ?? {};
    const etag = str(fields, 'odata.etag') ?? (typeof (fields.__metadata as Json | undefined)?.etag === 'string' ? ((fields.__metadata as Json).etag as string) : '*');
    await this.connector.merge(spId.uid, { ...changes, [ATTRIBUTION_FIELDS.modifiedBy]: actor.username }, id, etag);
    return fileId(spId.uid);
  }

  /**
   * The library's custom columns by Title (the names properties carry), read-only ones included as not
   * writable; the built-in ones (FromBaseType) are not properties here. One document type (SP.File), so
   * `type` changes nothing. Kinds from TypeAsString; MaxLength where the column declares it (Text: 255).
   */
  async describeProperties(_type?: string): Promise<PropertyDefinition[]> {
    const fields = await this.connector.listFields('InternalName,Title,FromBaseType,ReadOnlyField,TypeAsString,MaxLength');
    const out: PropertyDefinition[] = [];
    for (const f of fields) {
      const internal = str(f, 'InternalName');
      if (!internal || f.FromBaseType === true || ATTRIBUTION.has(internal)) continue;
      const typeName = str(f, 'TypeAsString') ?? 'Text';
      const maxLength = Number(f.MaxLength);
      out.push({
        name: str(f, 'Title') ?? internal,
        kind: FIELD_KINDS[typeName] ?? 'string',
        multiValue: typeName.endsWith('Multi'),
        writable: f.ReadOnlyField !== true,
        ...(Number.isInteger(maxLength) && maxLength > 0 ? { maxLength } : {}),
      });
    }
    return out;
  }
}

/** SharePoint field types (TypeAsString) as kinds; Text, Note, Choice, MultiChoice and the rest are strings. */
const FIELD_KINDS: Record<string, PropertyKind> = { Number: 'number', Currency: 'number', Integer: 'number', Counter: 'number', DateTime: 'date', Boolean: 'boolean' };
