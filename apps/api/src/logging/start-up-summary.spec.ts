import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/gateway-config';
import { startUpSummary } from './start-up-summary';

describe('startUpSummary: the default fs repository', () => {
  let folder: string;
  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'start-up-summary-unit-'));
  });
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

  const connectorsLine = (env: Record<string, string>) => startUpSummary(loadConfig(env), null).find((l) => l.startsWith('Connectors:'));

  it('names fs alone when no connector is declared', () => {
    expect(connectorsLine({ GATEWAY_DATA_DIR: folder })).toBe('Connectors: fs (filesystem)');
  });

  it('says that declaring connectors replaces the default fs repository', () => {
    const file = path.join(folder, 'gateway.yaml');
    fs.writeFileSync(file, 'connectors:\n  - id: docs\n    typeId: filesystem\n    params: { root: /srv/docs }\n');
    expect(connectorsLine({ GATEWAY_DATA_DIR: folder, GATEWAY_CONFIG: file })).toBe(
      `Connectors: docs (filesystem) (declared in GATEWAY_CONFIG; the default 'fs' repository at ${path.join(folder, 'repository')} is not served)`,
    );
  });
});
