import 'reflect-metadata';
import { ConfigError } from './config/gateway-config';
import { bootstrap } from './bootstrap';

bootstrap().catch((e: unknown) => {
  // Configuration mistakes get one clear line, not a stack trace.
  if (e instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${e.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
  process.exit(1);
});
