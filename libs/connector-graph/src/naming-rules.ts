import { MICROSOFT_365_NAMING_RULES, type NamingRules } from '@gateway/connector-api';

/** The names a drive takes through Microsoft Graph: Microsoft 365's rules (connector-api naming-rules.ts), which drive-items.ts enforces in part before any call. */
export const GRAPH_NAMING_RULES: NamingRules = MICROSOFT_365_NAMING_RULES;
