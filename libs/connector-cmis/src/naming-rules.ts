import type { NamingRules } from '@gateway/connector-api';

/**
 * The names a CMIS repository takes through this connector. CMIS itself sets none beyond one path
 * segment; the connector refuses `/`, controls, `.` and `..` and 1,024+ characters (input.ts), and the
 * servers refuse Windows' characters: Apache Chemistry InMemory (the tests' server, measured by
 * test/e2e/jobs-names.e2e-spec.ts) answers "not allowed are '/', '\', ':', '"', '*', '?', '<', '>', '|'",
 * as Alfresco does. Names are compared case-sensitively.
 */
export const CMIS_NAMING_RULES: NamingRules = {
  forbiddenCharacters: '/\\:"*?<>|',
  controlCharacters: 'c0-c1',
  maxSegment: { max: 1024, unit: 'chars' },
  reference: 'the CMIS connector (input.ts) and Apache Chemistry InMemory, measured',
};
