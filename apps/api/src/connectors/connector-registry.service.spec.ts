import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Connector, ConnectorDefinition, ConnectorType } from '@gateway/connector-api';
import type { GatewayConfig } from '../config/gateway-config';
import type { ConnectorModules } from './connector-registry.service';
import { kindsOf, startConnectorRegistry } from '../../../../test/support/connector-registry';

/** A kind whose create() answers a bare connector and remembers the definitions it was given. */
function recordingType(typeId: string): ConnectorType & { created: string[] } {
  const created: string[] = [];
  return {
    typeId,
    created,
    create: async (definition: ConnectorDefinition) => {
      created.push(definition.id);
      return { id: definition.id, typeId, description: definition.description } as unknown as Connector;
    },
  };
}

const configOf = (connectors: Array<Pick<ConnectorDefinition, 'id' | 'typeId'> & Partial<ConnectorDefinition>>) =>
  ({ dataDir: os.tmpdir(), connectors: connectors.map((c) => ({ description: c.id, params: {}, ...c })) }) as unknown as GatewayConfig;

describe('ConnectorRegistry', () => {
  it('loads the modules of the configured kinds only, each type building its connectors', async () => {
    const [used, unused] = [recordingType('used'), recordingType('unused')];
    const loaded: string[] = [];
    const kinds: ConnectorModules = Object.fromEntries(
      Object.entries(kindsOf([used, unused])).map(([typeId, load]) => [typeId, () => (loaded.push(typeId), load())]),
    );
    const registry = await startConnectorRegistry(configOf([{ id: 'a', typeId: 'used' }, { id: 'b', typeId: 'used' }]), kinds);
    expect(new Set(loaded)).toEqual(new Set(['used']));
    expect(used.created).toEqual(['a', 'b']);
    expect(unused.created).toEqual([]);
    expect(registry.list().map((c) => c.id)).toEqual(['a', 'b']);
  });

  it.each(['nosuchkind', 'constructor', '__proto__'])('refuses the unknown type %s, naming the definition and the known kinds', async (typeId) => {
    const config = configOf([{ id: 'a', typeId: 'one' }, { id: 'b', typeId }]);
    await expect(startConnectorRegistry(config, kindsOf([recordingType('one'), recordingType('two')]))).rejects.toThrow(
      `connectors[1].typeId: unknown connector type '${typeId}' (known: one, two)`,
    );
  });

  it('answers a param a real kind refuses as a config error naming it', async () => {
    await expect(startConnectorRegistry(configOf([{ id: 'fs', typeId: 'filesystem', params: { root: ' ' } }]))).rejects.toThrow(
      'connectors[0].params.root: must be the path of the repository folder',
    );
  });

  it('builds a real kind from its lib module', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-spec-'));
    try {
      const registry = await startConnectorRegistry(configOf([{ id: 'fs', typeId: 'filesystem', params: { root } }]));
      expect(registry.get('fs').typeId).toBe('filesystem');
      await registry.onApplicationShutdown();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
