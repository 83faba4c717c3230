import { invalid } from './paths';

/**
 * Custom properties. Names of built-in fields are refused rather than
 * interpreted: a rename through `svc_filename`/`name` would change the
 * path-derived id under the client's feet, and the other built-ins describe
 * the file itself (size, dates, versions) and cannot be set.
 */
const NAME = /^[A-Za-z][A-Za-z0-9_.:-]{0,127}$/;
const MAX_VALUE_LENGTH = 8192;
export const MAX_PROPERTIES = 256;

const BUILT_IN = new Set(
  [
    'id',
    'name',
    'path',
    'baseType',
    'typeId',
    'type',
    'mimeType',
    'size',
    'created',
    'modified',
    'createdBy',
    'modifiedBy',
    'description',
    'checkedOut',
    'checkedOutBy',
    'checkinComment',
    'versionCount',
    'versionLabel',
    'versionSeriesId',
    'etag',
    'properties',
    'fileId',
    'fileName',
    'folderId',
  ].map((n) => n.toLowerCase()),
);

function isBuiltIn(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('svc_') || lower.startsWith('cmis:') || BUILT_IN.has(lower);
}

/** Validated changes; an empty value means "remove the property". */
export function parsePropertyChanges(properties: unknown): [string, string][] {
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) {
    throw invalid('properties', 'must be a map of property names to values');
  }
  const changes = Object.entries(properties as Record<string, unknown>);
  if (changes.length > MAX_PROPERTIES) throw invalid('properties', `at most ${MAX_PROPERTIES} properties can be set`);
  for (const [name, value] of changes) {
    const parameter = name.slice(0, 128);
    if (!NAME.test(name)) {
      throw invalid(parameter, 'a property name starts with a letter and has at most 128 letters, digits or _ . : -');
    }
    if (isBuiltIn(name)) throw invalid(parameter, `'${name}' is a built-in property and cannot be set`);
    if (typeof value !== 'string') throw invalid(parameter, 'a property value must be a string');
    if (value.length > MAX_VALUE_LENGTH) throw invalid(parameter, `a property value has at most ${MAX_VALUE_LENGTH} characters`);
  }
  return changes as [string, string][];
}

/**
 * The properties a new document is created with (createFile's and copyFrom's `properties`), checked as
 * updateProperties checks them, before anything is written; an empty value sets nothing. Undefined: none.
 */
export function initialProperties(properties: unknown): Record<string, string> | undefined {
  if (properties === undefined) return undefined;
  const set = parsePropertyChanges(properties).filter(([, value]) => value !== '');
  return set.length === 0 ? undefined : Object.fromEntries(set);
}
