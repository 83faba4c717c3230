import { MICROSOFT_365_NAMING_RULES, type NamingRules } from '@gateway/connector-api';

/** The names a SharePoint library takes through its REST API: Microsoft 365's rules (connector-api naming-rules.ts), which names.ts enforces in part before any call. */
export const SHAREPOINT_NAMING_RULES: NamingRules = MICROSOFT_365_NAMING_RULES;
