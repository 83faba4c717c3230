#!/usr/bin/env node
'use strict';
/**
 * Prints nginx's internal locations of the download offload (GATEWAY_ACCEL_REDIRECT) for a gateway
 * configuration: one per filesystem connector root, and the user-file folder. Run it with the
 * gateway's own environment (GATEWAY_CONFIG, GATEWAY_DATA_DIR, GATEWAY_USER_FILES_DIR, the variables
 * the file names), and paste its output between `# offload:begin` and `# offload:end` of nginx.conf,
 * or `include` the file it is written to:
 *
 *   GATEWAY_CONFIG=docker/gateway.yaml GATEWAY_DATA_DIR=/data npm run --silent nginx-offload > offload.conf
 *
 * Options: --map FROM=TO (repeatable) rewrites a folder prefix where nginx sees the files elsewhere
 * than the gateway (another container's mount); --prefix /_offload when GATEWAY_ACCEL_REDIRECT is not
 * set in this environment. The configuration is read by the gateway's loader (the built dist/, or the
 * sources through ts-node): defaults, ${VAR} references and validation are the gateway's own.
 */
const path = require('node:path');
const fs = require('node:fs');

const ROOT = path.resolve(__dirname, '..');

/** The gateway's loadConfig: the built one when there is one, otherwise the TypeScript source. */
function gatewayLoadConfig() {
  const built = path.join(ROOT, 'dist/apps/api/src/config/gateway-config.js');
  if (fs.existsSync(built)) return require(built).loadConfig;
  require('ts-node').register({ transpileOnly: true, project: path.join(ROOT, 'tsconfig.json') });
  return require(path.join(ROOT, 'apps/api/src/config/gateway-config.ts')).loadConfig;
}

/**
 * The body of every offload location (as docker/nginx.conf ships it): internal only, no symbolic link
 * followed, and the gateway's validators and protective headers sent instead of nginx's own.
 */
const LOCATION_BODY = [
  'internal;',
  'disable_symlinks on from=$document_root;',
  // The gateway already answered 304 when it could; its validators are the ones sent.
  'etag off;',
  'if_modified_since off;',
  'add_header ETag $upstream_http_etag;',
  'add_header Last-Modified $upstream_http_last_modified;',
  'add_header X-Content-Type-Options nosniff;',
  'add_header Content-Security-Policy $upstream_http_content_security_policy;',
];

/** nginx takes a quoted string where a path has spaces, quotes or semicolons. */
function nginxPath(p) {
  const withSlash = p.endsWith('/') ? p : `${p}/`;
  return /^[A-Za-z0-9/_.~@+,=-]+$/.test(withSlash) ? withSlash : `"${withSlash.replace(/(["\\$])/g, '\\$1')}"`;
}

function mapPath(p, maps) {
  for (const { from, to } of maps) {
    if (p === from || p.startsWith(from.endsWith('/') ? from : `${from}/`)) return to + p.slice(from.replace(/\/$/, '').length);
  }
  return p;
}

/**
 * The location blocks for a loaded gateway configuration.
 * @param {{ connectors: Array<{ id: string, typeId: string, params?: Record<string, unknown> }>, files: { dir: string, store?: { kind: string } } }} config
 * @param {{ prefix: string, maps?: Array<{ from: string, to: string }>, indent?: string }} options
 */
function offloadLocations(config, { prefix, maps = [], indent = '    ' }) {
  const block = (location, folder, comment) =>
    [`${indent}# ${comment}`, `${indent}location ${location} {`, `${indent}  alias ${nginxPath(mapPath(folder, maps))};`, ...LOCATION_BODY.map((l) => `${indent}  ${l}`), `${indent}}`].join('\n');
  const blocks = [];
  if (!config.files.store || config.files.store.kind === 'local') blocks.push(block(`${prefix}/files/`, config.files.dir, 'user files (exports)'));
  for (const connector of config.connectors) {
    if (connector.typeId !== 'filesystem') continue;
    const root = connector.params && connector.params.root;
    if (typeof root !== 'string') throw new Error(`connector '${connector.id}': params.root is not a path`);
    blocks.push(block(`${prefix}/repo/${connector.id}/`, path.resolve(root), `filesystem connector '${connector.id}'`));
  }
  return blocks.join('\n');
}

function parseArgs(argv) {
  const options = { maps: [], prefix: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--map') {
      const [from, to] = value().split('=');
      if (!from || !to) throw new Error('--map takes FROM=TO (two absolute folders)');
      options.maps.push({ from: path.resolve(from), to });
    } else if (arg === '--prefix') options.prefix = value();
    else throw new Error(`unknown option ${arg} (--map FROM=TO, --prefix /_offload)`);
  }
  return options;
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const config = gatewayLoadConfig()(process.env);
  let prefix = options.prefix;
  if (config.offload && config.offload.kind === 'accel-redirect') {
    if (prefix && prefix !== config.offload.prefix) throw new Error(`--prefix ${prefix} differs from GATEWAY_ACCEL_REDIRECT=${config.offload.prefix}`);
    prefix = config.offload.prefix;
  }
  if (!prefix) throw new Error('set GATEWAY_ACCEL_REDIRECT (as the gateway has it) or give --prefix /_offload');
  process.stdout.write(`${offloadLocations(config, { prefix, maps: options.maps })}\n`);
}

module.exports = { offloadLocations, LOCATION_BODY };

if (require.main === module) {
  try {
    main();
  } catch (error) {
    process.stderr.write(`nginx-offload: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
