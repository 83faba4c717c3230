import { GatewayError, InvalidArgumentError, type Actor, type ContentConnector, type PropertyDefinition } from '@gateway/connector-api';
import type { DocOutcome } from '@gateway/persistence';
import type { PropertyMapping } from '../../config/property-mapping.dto';
import { BatchedItemReads } from './batched-item-reads';
import { checkAgainstTarget, compileMapping, mapDocument, type CompiledMapping, type MappedDocument } from './property-mapping';

/** A document's mapping, settled before anything is written: the target type and properties, or why the document fails. */
export interface PreparedProperties {
  type?: string;
  properties: Record<string, string>;
  failure?: string;
}

/** The target refused the properties of a document: the copy (if one was written) is removed and the document fails. */
export class PropertiesRefused extends Error {
  constructor(
    message: string,
    /** The copy removed; undefined when the create carrying the properties refused them (nothing was written). */
    readonly targetId?: string,
  ) {
    super(message);
  }

  outcome(docId: string, sourcePath: string): DocOutcome {
    return { docId, outcome: 'e', sourcePath, ...(this.targetId !== undefined ? { targetId: this.targetId } : {}), message: this.message };
  }
}

/**
 * A copy job's property and type mapping on the copy path (one per copier: it remembers the
 * target's property schema per type). prepare() reads the source document (the listing's items do
 * not carry properties: the reads of a turn go together, BatchedItemReads), maps it and checks the
 * values against what the target declares, so that a refused value fails the document before a byte
 * is written. A target whose propertyUpdate group declares `propertiesOnCreate` is given them with
 * the content (onCreate(), refusedAtCreate()); on any other, apply() sets them on the written document.
 */
export class MappedProperties {
  private readonly mapping: CompiledMapping;
  private readonly schemas = new Map<string, Promise<ReadonlyMap<string, PropertyDefinition> | undefined>>();
  /** Whether the source document must be read: not when only constants are written. */
  private readonly readsSource: boolean;
  private readonly reads: BatchedItemReads;

  constructor(
    mapping: PropertyMapping,
    private readonly source: ContentConnector,
    private readonly target: ContentConnector,
    private readonly actor: Actor,
  ) {
    this.mapping = compileMapping(mapping);
    this.readsSource = this.mapping.rules.size > 0 || this.mapping.types.size > 0 || this.mapping.unmapped !== 'drop';
    this.reads = new BatchedItemReads(source);
  }

  async prepare(sourceId: string): Promise<PreparedProperties> {
    return this.settle(mapDocument(this.mapping, this.readsSource ? await this.reads.read(sourceId) : {}));
  }

  /** The properties to give the create call itself: those prepared, when the target writes them with the content. */
  onCreate(prepared: PreparedProperties | undefined): Record<string, string> | undefined {
    if (!prepared || !this.target.propertyUpdate?.propertiesOnCreate || Object.keys(prepared.properties).length === 0) return undefined;
    return prepared.properties;
  }

  /**
   * A create that carried `properties` and failed: PropertiesRefused when the target refused one of them
   * (its InvalidArgumentError names the property; nothing was written), else undefined (the error is the write's).
   */
  refusedAtCreate(e: unknown, properties: Record<string, string>): PropertiesRefused | undefined {
    if (!(e instanceof InvalidArgumentError) || !Object.hasOwn(properties, e.parameter)) return undefined;
    return new PropertiesRefused(`PROPERTY_REFUSED: ${e.code}: ${e.message}; nothing was written`);
  }

  /**
   * A dry run's look at one document (DocumentPlanner's map step): the same decision as prepare(), and
   * every source property no rule names, and a source type `types` does not map, noted.
   */
  async note(sourceId: string, notes: { unmapped(kind: 'property' | 'type', name: string): void }): Promise<PreparedProperties> {
    const item = this.readsSource ? await this.reads.read(sourceId) : undefined;
    const doc = mapDocument(this.mapping, item ?? {});
    for (const name of doc.unmapped) notes.unmapped('property', name);
    const typeId = item?.typeId;
    if (this.mapping.types.size > 0 && typeId !== undefined && doc.type === undefined) notes.unmapped('type', typeId);
    return this.settle(doc);
  }

  private async settle(doc: MappedDocument): Promise<PreparedProperties> {
    if (doc.failure) return { properties: {}, failure: doc.failure };
    const typed = doc.type !== undefined ? { type: doc.type } : {};
    if (!this.target.propertyUpdate) {
      const [first] = doc.properties.keys();
      // Kept same-name properties go where the target takes them: nowhere here.
      if (first === undefined) return { ...typed, properties: {} };
      return { ...typed, properties: {}, failure: `PROPERTY_REFUSED: property '${first}': the target connector cannot set properties (no propertyUpdate group)` };
    }
    const write = checkAgainstTarget(doc, await this.schemaOf(doc.type));
    if (write.refused) return { ...typed, properties: {}, failure: write.refused };
    return { ...typed, properties: write.properties };
  }

  /**
   * Sets the prepared properties on the written document. A refusal removes what this write added
   * (the document, or the version when `addedVersion`), so a later run writes it again, and throws
   * PropertiesRefused naming the property and the target's reason.
   */
  async apply(targetId: string, prepared: PreparedProperties, addedVersion: boolean): Promise<void> {
    if (Object.keys(prepared.properties).length === 0) return;
    try {
      await this.target.propertyUpdate!.updateProperties(targetId, prepared.properties, this.actor);
    } catch (e) {
      if (!(e instanceof GatewayError)) throw e;
      let fate: string;
      try {
        await this.target.deleteItem(targetId, !addedVersion, this.actor);
        fate = addedVersion ? 'the version written is removed' : 'the copy is removed';
      } catch (d) {
        fate = `the copy could not be removed (${(d as Error)?.message ?? String(d)})`;
      }
      throw new PropertiesRefused(`PROPERTY_REFUSED: ${e.code}: ${e.message}; ${fate}`, targetId);
    }
  }

  /** What the target declares of a type's properties, asked once per type; undefined when it cannot tell. */
  private schemaOf(type: string | undefined): Promise<ReadonlyMap<string, PropertyDefinition> | undefined> {
    const key = type ?? '';
    let schema = this.schemas.get(key);
    if (!schema) {
      const describe = this.target.propertyUpdate?.describeProperties?.bind(this.target.propertyUpdate);
      schema = describe ? describe(type).then((list) => new Map(list.map((p) => [p.name, p]))) : Promise.resolve(undefined);
      // A failed look-up is asked again by the next document.
      schema.catch(() => this.schemas.delete(key));
      this.schemas.set(key, schema);
    }
    return schema;
  }
}
