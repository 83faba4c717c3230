/** How a field is matched. Unknown fields are 'keyword'. */
export type FieldType = 'text' | 'keyword' | 'number' | 'date';
export type FieldSchema = Readonly<Record<string, FieldType>>;

/**
 * The gateway's index mapping (the search contract corpus and the indexing
 * jobs use it). Fields named `prop_*` are keyword.
 *  text:    title, name, content, path       (tokenised, case-insensitive word match)
 *  keyword: id, mime_type, author, tags, source_connector, source_id, acl_read (exact, case-sensitive)
 *  number:  size
 *  date:    created, modified                 (ISO 8601 UTC)
 */
export const DEFAULT_FIELD_SCHEMA: FieldSchema = Object.freeze({
  title: 'text',
  name: 'text',
  content: 'text',
  path: 'text',
  id: 'keyword',
  mime_type: 'keyword',
  author: 'keyword',
  tags: 'keyword',
  source_connector: 'keyword',
  source_id: 'keyword',
  acl_read: 'keyword',
  size: 'number',
  created: 'date',
  modified: 'date',
});

/** A bare term or phrase without a field searches this field. */
export const DEFAULT_FIELD = 'content' as const;

/** Field names every engine accepts as they are: never an operator ($...), a local param or a function. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;
/** Solr's magic fields (_query_ and _val_ parse their value as a query) and internal fields (_version_, _root_). */
const RESERVED_FIELD_NAME = /^_.*_$/;

export function isValidFieldName(name: string): boolean {
  return FIELD_NAME.test(name) && !RESERVED_FIELD_NAME.test(name);
}

/** The field's type; fields the schema does not name are keyword. */
export function fieldTypeOf(schema: FieldSchema, field: string): FieldType {
  return Object.prototype.hasOwnProperty.call(schema, field) ? schema[field] : 'keyword';
}
