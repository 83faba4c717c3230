import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../apps/api/src/config/gateway-config';
import { listen } from '../support/files';
import { ADMIN, startGateway, type TestGateway } from '../support/gateway';
import { errorCodesInSource, fencedBlocks, handbookFiles, validateConnectors, walkthroughSteps } from '../support/handbook';
import { REPO_ROOT } from '../support/process';

/** Issue 39: the handbook's examples are the product's, checked by the product's own validators. */

const run = promisify(execFile);

/** Loads one YAML example as GATEWAY_CONFIG (every ${VAR} it names set), then validates each connector's params. */
async function validateExample(yaml: string, folder: string): Promise<void> {
  const file = path.join(folder, 'example.yaml');
  fs.writeFileSync(file, yaml);
  const variables = Object.fromEntries([...yaml.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => [m[1], `example-value-of-${m[1]}`]));
  await validateConnectors(loadConfig({ ...variables, GATEWAY_CONFIG: file, GATEWAY_DATA_DIR: folder }));
}

describe('Handbook', () => {
  let folder: string;
  beforeAll(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'handbook-e2e-'));
  });
  afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

  const examples = handbookFiles().flatMap((file) =>
    fencedBlocks(fs.readFileSync(file, 'utf8'), 'yaml').map((block) => ({ where: `${path.relative(REPO_ROOT, file)}:${block.line}`, yaml: block.text })),
  );

  it('has a YAML example for each connector kind', () => {
    const kinds = new Set(examples.flatMap(({ yaml }) => [...yaml.matchAll(/typeId: (\w+)/g)].map((m) => m[1])));
    expect([...kinds].sort()).toEqual(expect.arrayContaining(['cmis', 'elasticsearch', 'filesystem', 'graph', 'mongodb', 's3', 'sharepoint', 'solr']));
  });

  it.each(examples.map((e) => [e.where, e.yaml]))('%s: the YAML example passes the configuration and connector validators', async (_where, yaml) => {
    await validateExample(yaml, folder);
  });

  it('refuses an example with a misspelt key, in the file schema and in each kind of params', async () => {
    await expect(validateExample('connectors:\n  - id: docs\n    typeId: filesystem\n    prams: { root: /srv/docs }\n', folder)).rejects.toThrow(/connectors\[0\]\.prams: unknown key/);
    let checked = 0;
    for (const { yaml } of examples) {
      // A misspelt key added to the first connector's params, at their indentation.
      const misspelt = yaml.replace(/^(\s*)params:\n(\s+)/m, '$1params:\n$2colection: documents\n$2');
      if (misspelt === yaml) continue;
      await expect(validateExample(misspelt, folder)).rejects.toThrow(/params\.colection: unknown parameter/);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it('troubleshooting names every error code the source gives its typed errors', () => {
    const codes = [...errorCodesInSource()];
    expect(codes.length).toBeGreaterThan(50);
    const page = fs.readFileSync(path.join(REPO_ROOT, 'docs/troubleshooting.md'), 'utf8');
    expect(codes.filter((code) => !page.includes(`\`${code}\``)).sort()).toEqual([]);
  });

  describe('the getting-started walk-through, against a started gateway', () => {
    let gw: TestGateway;
    let workDir: string;
    const variables: Record<string, string> = {};
    beforeAll(async () => {
      gw = await startGateway();
      workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'handbook-walkthrough-'));
      // Every curl of the walk-through appends its status on a line of its own (the reader's curl does not).
      fs.writeFileSync(path.join(workDir, '.curlrc'), 'write-out = "\\n%{http_code}"\n');
      Object.assign(variables, { GW: await listen(gw), PW: ADMIN.password });
    });
    afterAll(async () => {
      await gw.close();
      fs.rmSync(workDir, { recursive: true, force: true });
    });

    const steps = walkthroughSteps(fs.readFileSync(path.join(REPO_ROOT, 'docs/getting-started.md'), 'utf8'));

    it('has its steps', () => {
      expect(steps.length).toBeGreaterThanOrEqual(20);
    });

    it.each(steps.map((s) => [`docs/getting-started.md:${s.line}`, s]))('%s', async (_where, step) => {
      for (let attempt = 0; ; attempt++) {
        // execFile, not execFileSync: the gateway answering the command runs in this process.
        const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', step.script], { cwd: workDir, env: { PATH: process.env.PATH, CURL_HOME: workDir, ...variables }, maxBuffer: 16 * 1024 * 1024 });
        const lines = stdout.split('\n');
        const status = Number(lines.pop());
        const body = lines.join('\n');
        if (step.until && !body.includes(step.until) && attempt < 200) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        expect({ status, body }).toEqual({ status: step.expect, body: expect.anything() });
        if (step.until) expect(body).toContain(step.until);
        if (step.save) {
          const value = step.save.path.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown>)?.[key], JSON.parse(body));
          expect(value).toBeDefined();
          variables[step.save.name] = String(value);
        }
        return;
      }
    });
  });
});
