import { isContentConnector, type Connector, type ContentConnector } from './connector';

/** The capability names of spec 2.7, in the order the spec lists them. */
export const CAPABILITY_NAMES = [
  'deleteFolder',
  'createFileFromItem',
  'getObjectIDByPath',
  'listFolderItems',
  'getContent',
  'createRelationship',
  'createFile',
  'getRelationships',
  'listVersions',
  'updateFile',
  'checkIn',
  'deleteObjectByID',
  'updateProperties',
  'getRootFolderId',
  'getEditProperties',
  'getLibrariesForSite',
  'getObjectProperties',
  'getSubSites',
  'getAllSites',
  'createFolder',
  'getTypes',
  'getFileItem',
  'checkOut',
  'getFileContent',
] as const;

/** The gateway's own capability groups beyond the spec's list (reported beside them). */
export const EXTENSION_CAPABILITY_NAMES = ['search', 'index', 'versionStamps'] as const;

export type CapabilityName = (typeof CAPABILITY_NAMES)[number] | (typeof EXTENSION_CAPABILITY_NAMES)[number];
export type Capabilities = Record<CapabilityName, boolean>;

/**
 * Derives the spec's capability booleans from what the driver actually
 * implements, so the answer can never drift from the code.
 */
export function deriveCapabilities(subject: Connector | ContentConnector): Capabilities {
  const core = isContentConnector(subject);
  // A search-only connector has none of the content groups either.
  const connector: Partial<ContentConnector> = core ? subject : {};
  const caps: Capabilities = {
    deleteFolder: typeof connector.folders?.deleteFolder === 'function',
    createFileFromItem: connector.copy !== undefined,
    getObjectIDByPath: core,
    listFolderItems: core,
    getContent: core,
    createRelationship: connector.relationships !== undefined,
    createFile: core,
    getRelationships: connector.relationships !== undefined,
    listVersions: connector.versioning !== undefined,
    updateFile: connector.contentUpdate !== undefined,
    checkIn: connector.checkInOut !== undefined,
    deleteObjectByID: core,
    updateProperties: connector.propertyUpdate !== undefined,
    getRootFolderId: core,
    getEditProperties: connector.propertyUpdate !== undefined,
    getLibrariesForSite: connector.sites !== undefined,
    getObjectProperties: core,
    getSubSites: connector.sites !== undefined,
    getAllSites: connector.sites !== undefined,
    createFolder: connector.folders !== undefined,
    getTypes: core,
    getFileItem: core,
    checkOut: connector.checkInOut !== undefined,
    getFileContent: core,
    search: subject.search !== undefined,
    index: subject.index !== undefined,
    versionStamps: connector.versionStamps !== undefined,
  };
  return caps;
}

/**
 * A capability group whose operations are the connector's own methods of the same names:
 * `readonly versioning: VersioningCapability = group(this, 'listVersions')`. Each member looks
 * the method up at call time, as the hand-written arrows did (so a spy or a subclass override
 * on the instance is what runs), and calls it with the connector as `this`.
 */
export function group<C extends object, K extends keyof C>(connector: C, ...names: K[]): Pick<C, K> {
  const members: Partial<Pick<C, K>> = {};
  for (const name of names) {
    (members as Record<K, unknown>)[name] = (...args: unknown[]) => (connector[name] as (...a: unknown[]) => unknown).apply(connector, args);
  }
  return members as Pick<C, K>;
}
