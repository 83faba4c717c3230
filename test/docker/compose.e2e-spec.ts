import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../apps/api/src/config/gateway-config';
import { REPO_ROOT } from '../support/process';

/**
 * docker/compose.yaml cannot run here (no Docker engine): its wiring is checked against
 * nginx.conf and the gateway's own configuration loader, so a renamed service, port, path or
 * setting fails here rather than in an operator's first `docker compose up`.
 */
describe('docker/compose.yaml agrees with nginx.conf and the gateway configuration', () => {
  const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker/compose.yaml'), 'utf8'), { merge: true });
  const nginxConf = fs.readFileSync(path.join(REPO_ROOT, 'docker/nginx.conf'), 'utf8');
  const services = compose.services as Record<string, any>;
  const gateways = Object.keys(services).filter((s) => s.startsWith('gateway-'));
  const envOf = (name: string): Record<string, string> =>
    Object.fromEntries(
      Object.entries(services[name].environment as Record<string, string>).map(([k, v]) => [
        k,
        // compose's ${VAR:?message} (required) / ${VAR:-default}, as an operator's environment would fill them
        String(v).replace(/\$\{(\w+):([?-])([^}]*)\}/g, (_m, name: string, kind: string, rest: string) => (kind === '?' ? `set-${name.toLowerCase()}` : rest)),
      ]),
    );
  /** A container path of a bind mount of the gateway service, as the path of the file in docker/. */
  const boundFile = (service: string, target: string): string => {
    const mount = (services[service].volumes as string[]).find((v) => v.split(':')[1] === target);
    if (!mount) throw new Error(`${service} mounts nothing at ${target}`);
    return path.join(REPO_ROOT, 'docker', mount.split(':')[0]);
  };

  it('runs nginx, two gateway nodes, PostgreSQL and Redis, each restarted unless stopped, on no fixed address', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway-1', 'gateway-2', 'nginx', 'postgres', 'redis']);
    for (const service of Object.values(services)) expect(service.restart).toBe('unless-stopped');
    expect(compose.networks).toBeUndefined();
    expect(Object.values(services).filter((service) => service.networks !== undefined)).toEqual([]);
    for (const g of gateways) {
      expect(services[g].build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' });
      expect(services[g].depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
    }
  });

  it('nginx balances over exactly the gateway services, on their PORT, and publishes its listen port', () => {
    const upstream = nginxConf.match(/upstream gateway \{([^}]*)\}/)![1];
    const servers = [...upstream.matchAll(/^\s*server (\S+);/gm)].map((m) => m[1]).sort();
    expect(servers).toEqual(gateways.map((g) => `${g}:${envOf(g).PORT}`).sort());
    const listen = nginxConf.match(/^\s*listen (\d+);/m)![1];
    expect(services.nginx.ports).toEqual([`${listen}:${listen}`]);
    // nginx mounts its configuration and, read-only, only the two folders its offload locations serve.
    const [conf, ...data] = services.nginx.volumes as [string, ...Record<string, any>[]];
    expect(conf).toBe('./nginx.conf:/etc/nginx/nginx.conf:ro');
    const aliases = [...nginxConf.matchAll(/^\s*alias (\S+)\/;/gm)].map((m) => m[1]).sort();
    expect(data.map((v) => v.target).sort()).toEqual(aliases);
    for (const v of data) expect(v).toEqual({ type: 'volume', source: 'gateway-data', target: v.target, read_only: true, volume: { subpath: path.basename(v.target) } });
  });

  it('the database password has no default: compose refuses to start without POSTGRES_PASSWORD', () => {
    const raw = fs.readFileSync(path.join(REPO_ROOT, 'docker/compose.yaml'), 'utf8');
    expect(raw).not.toMatch(/POSTGRES_PASSWORD:-/);
    expect(services.postgres.environment.POSTGRES_PASSWORD).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const g of gateways) expect(new URL(envOf(g).DATABASE_URL).password).toBe('set-postgres_password');
  });

  it('every gateway node has a configuration the gateway accepts, matching what nginx forwards and serves', () => {
    for (const g of gateways) {
      const env = envOf(g);
      // GATEWAY_CONFIG names the mounted docker/gateway.yaml: the gateway must accept that file.
      const config = loadConfig({ ...env, GATEWAY_CONFIG: boundFile(g, env.GATEWAY_CONFIG) });
      expect(nginxConf).toContain(`location ${config.contextPath}/ {`);
      // Trusted: one hop, nginx (no gateway port is published, so no client reaches a node directly).
      expect(config.trustProxy).toBe(1);
      expect(services[g].ports).toBeUndefined();
      // The offload's internal locations serve what this node writes, from the same volume.
      expect(config.offload).toEqual({ kind: 'accel-redirect', prefix: '/_offload' });
      const files = nginxConf.match(/location \/_offload\/files\/ \{\s*alias (\S+);/)![1];
      expect(files).toBe(`${config.files.dir}/`);
      const fsRoot = nginxConf.match(/location \/_offload\/repo\/fs\/ \{[^\n]*\n\s*alias (\S+);/)![1];
      expect(fsRoot).toBe(`${config.connectors.find((c) => c.id === 'fs')!.params.root as string}/`);
      expect(services[g].volumes).toEqual([`gateway-data:${config.dataDir}`, `./gateway.yaml:${env.GATEWAY_CONFIG}:ro`]);
      // Metrics: a port of their own, reachable on the compose network, never published nor proxied.
      expect(config.metricsPort).toBeDefined();
      expect(services[g].ports).toBeUndefined();
      expect(nginxConf).not.toContain(String(config.metricsPort));
      expect(new URL(config.databaseUrl!).hostname).toBe('postgres');
      expect(new URL(config.jobs.redisUrl!).hostname).toBe('redis');
    }
  });
});
