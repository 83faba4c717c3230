/**
 * Connector ids become URL path segments: keep them plain. Imports nothing, so the configuration
 * schema and the job definitions (which the schema embeds) can both use it without importing each other.
 */
export const CONNECTOR_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
