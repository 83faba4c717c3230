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
        // compose's ${VAR:?message} / ${VAR:-default}, as an operator's environment would fill them
        String(v).replace(/\$\{(\w+):[?-]([^}]*)\}/g, (_m, name: string, rest: string) => (name === 'GATEWAY_ADMIN_PASSWORD' ? 'an-admin-password' : rest)),
      ]),
    );

  it('runs nginx, two gateway nodes, PostgreSQL and Redis', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway-1', 'gateway-2', 'nginx', 'postgres', 'redis']);
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
    expect(services.nginx.volumes).toEqual(['./nginx.conf:/etc/nginx/nginx.conf:ro', 'gateway-data:/data:ro']);
  });

  it('every gateway node has a configuration the gateway accepts, matching what nginx forwards and serves', () => {
    const nginxAddress = services.nginx.networks.default.ipv4_address;
    for (const g of gateways) {
      const env = envOf(g);
      const config = loadConfig(env);
      expect(nginxConf).toContain(`location ${config.contextPath}/ {`);
      // Trusted: nginx alone.
      expect(config.trustProxy).toBe(nginxAddress);
      // The offload's internal locations serve what this node writes, from the same volume.
      expect(config.offload).toEqual({ kind: 'accel-redirect', prefix: '/_offload' });
      const files = nginxConf.match(/location \/_offload\/files\/ \{\s*alias (\S+);/)![1];
      expect(files).toBe(`${config.files.dir}/`);
      const fsRoot = nginxConf.match(/location \/_offload\/repo\/fs\/ \{[^\n]*\n\s*alias (\S+);/)![1];
      expect(fsRoot).toBe(`${config.connectors.find((c) => c.id === 'fs')!.params.root as string}/`);
      expect(services[g].volumes).toEqual([`gateway-data:${config.dataDir}`]);
      // Metrics: a port of their own, reachable on the compose network, never published nor proxied.
      expect(config.metricsPort).toBeDefined();
      expect(services[g].ports).toBeUndefined();
      expect(nginxConf).not.toContain(String(config.metricsPort));
      expect(new URL(config.databaseUrl!).hostname).toBe('postgres');
      expect(new URL(config.jobs.redisUrl!).hostname).toBe('redis');
    }
  });
});
