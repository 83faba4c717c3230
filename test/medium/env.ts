/** Where the medium project's global setup (global-setup.ts) leaves the admin URL of its PostgreSQL for the workers. */
export const MEDIUM_POSTGRES_ENV = 'GATEWAY_MEDIUM_POSTGRES_URL';
