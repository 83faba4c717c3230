import type { ContentConnector } from './connector';

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

export type CapabilityName = (typeof CAPABILITY_NAMES)[number];
export type Capabilities = Record<CapabilityName, boolean>;

/**
 * Derives the spec's capability booleans from what the driver actually
 * implements, so the answer can never drift from the code.
 */
export function deriveCapabilities(connector: ContentConnector): Capabilities {
  const core = true;
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
  };
  return caps;
}
