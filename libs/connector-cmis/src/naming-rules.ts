import type { NamingRules } from '@gateway/connector-api';

/**
 * The names a CMIS repository takes through this connector: one path segment without controls
 * (input.ts checks them before any call), at most 1,024 characters. CMIS itself sets no more; the
 * Apache Chemistry InMemory server used in the tests takes every other name, case-sensitively
 * (test/e2e/jobs-names.e2e-spec.ts writes every hostile name there unchanged). A repository with
 * stricter rules (Alfresco refuses `* " < > \ / ? : |`) refuses such a write as an error of the document.
 */
export const CMIS_NAMING_RULES: NamingRules = {
  forbiddenCharacters: '/',
  controlCharacters: 'c0-c1',
  maxSegment: { max: 1024, unit: 'chars' },
  reference: 'the CMIS connector (input.ts) and Apache Chemistry InMemory, measured',
};
