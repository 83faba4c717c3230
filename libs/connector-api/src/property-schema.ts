/**
 * What a repository says of the properties a document can carry: their kind, whether they hold
 * several values, whether a client may write them, and how long a text may be. Offered by the
 * propertyUpdate group's optional `describeProperties`; a job's property mapping checks its values
 * against it before writing (apps/api/src/jobs/mapping). A driver that cannot tell leaves it out.
 */
export type PropertyKind = 'string' | 'number' | 'date' | 'boolean';

export interface PropertyDefinition {
  /** The name updateProperties takes. */
  name: string;
  kind: PropertyKind;
  multiValue: boolean;
  /** False for a property only the repository sets (CMIS readonly/oncreate, SharePoint ReadOnlyField). */
  writable: boolean;
  /** Characters, for a string property whose repository declares a limit. */
  maxLength?: number;
}
