/** Jest globalTeardown of the `medium` project: stops the PostgreSQL that global-setup.ts started (if it started one). */
import globalTeardown from '../engines/global-teardown';

export default globalTeardown;
