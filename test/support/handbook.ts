import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseParams as parseCmisParams } from '../../libs/connector-cmis/src/params';
import { parseGraphParams } from '@gateway/connector-graph';
import { parseConnectorParams as parseS3Params } from '../../libs/connector-s3/src/client';
import { parseParams as parseSharePointParams } from '@gateway/connector-sharepoint';
import { InvalidArgumentError } from '@gateway/connector-api';
import type { GatewayConfig } from '../../apps/api/src/config/gateway-config';
import { startConnectorRegistry } from './connector-registry';
import { REPO_ROOT } from './process';

/** The handbook's Markdown files: docs/**\/*.md. */
export function handbookFiles(dir = path.join(REPO_ROOT, 'docs')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return handbookFiles(full);
    return e.name.endsWith('.md') ? [full] : [];
  });
}

/** The fenced blocks of one language in a Markdown text, with the line each starts on. */
export function fencedBlocks(markdown: string, language: string): Array<{ line: number; text: string }> {
  const blocks: Array<{ line: number; text: string }> = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```' + language) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    blocks.push({ line: start + 1, text: lines.slice(start, end).join('\n') + '\n' });
    i = end;
  }
  return blocks;
}

/**
 * Validates a connector's params as its ConnectorType does before it connects: the parser each of these
 * kinds' create() calls first (their create() then connects, reads the certificate, or, for filesystem,
 * creates the folder).
 * The parsers of graph, s3 and filesystem do not refuse unknown keys themselves; for those, a key the
 * parser does not read is refused here, so that a misspelt key in an example fails instead of being
 * silently ignored. Any other kind is created through the gateway's own registry (its create() only
 * parses and builds a client), then closed.
 */
const PARSERS: Record<string, (p: Record<string, unknown>) => object> = {
  cmis: parseCmisParams,
  graph: parseGraphParams,
  s3: parseS3Params,
  // Its create() reads the certificate file, which an example names but this machine has not.
  sharepoint: parseSharePointParams,
  filesystem: (p) => {
    if (typeof p.root !== 'string' || p.root.trim() === '') throw new InvalidArgumentError('root', 'must be the path of the repository folder');
    if (p.windowsNames !== undefined && typeof p.windowsNames !== 'boolean') throw new InvalidArgumentError('windowsNames', 'must be true or false');
    return { root: p.root, ...(p.windowsNames !== undefined ? { windowsNames: p.windowsNames } : {}) };
  },
};

export async function validateConnectors(config: GatewayConfig): Promise<void> {
  for (const [index, connector] of config.connectors.entries()) {
    const parse = PARSERS[connector.typeId];
    if (!parse) {
      const registry = await startConnectorRegistry({ ...config, connectors: [connector] });
      await registry.onApplicationShutdown();
      continue;
    }
    try {
      const parsed = parse(connector.params);
      const unknown = Object.keys(connector.params).filter((key) => !Object.hasOwn(parsed, key));
      if (unknown.length > 0) throw new InvalidArgumentError(unknown[0], `unknown parameter (known: ${Object.keys(parsed).join(', ')})`);
    } catch (e) {
      throw new Error(`connectors[${index}].params.${(e as { parameter?: string }).parameter ?? ''}: ${(e as Error).message}`);
    }
  }
}

/** One command of the getting-started walk-through: a ```sh block that ends with `# expect: <status>`. */
export interface WalkthroughStep {
  line: number;
  script: string;
  expect: number;
  /** `# save: NAME=dotted.path`: the answer's value at that path becomes the shell variable NAME. */
  save?: { name: string; path: string };
  /** `# until: text`: repeat the command until its answer contains the text. */
  until?: string;
}

export function walkthroughSteps(markdown: string): WalkthroughStep[] {
  return fencedBlocks(markdown, 'sh').flatMap(({ line, text }) => {
    const expect = /^# expect: (\d{3})$/m.exec(text);
    if (!expect) return [];
    const save = /^# save: ([A-Z_]+)=([\w.]+)$/m.exec(text);
    const until = /^# until: (.+)$/m.exec(text);
    return [{ line, script: text, expect: Number(expect[1]), save: save ? { name: save[1], path: save[2] } : undefined, until: until?.[1] }];
  });
}

/**
 * The error codes the gateway's code gives its typed errors: the fixed ones of libs/errors, the
 * `<RESOURCE>_NOT_FOUND` of each resource named, `super('<CODE>'` and default `code = '<CODE>'` in error
 * classes, and every
 * upper-case code literal among the arguments of a ConflictError, GoneError or InvalidArgumentError.
 */
export function errorCodesInSource(roots = ['apps/api/src', 'libs'].map((r) => path.join(REPO_ROOT, r))): Set<string> {
  const codes = new Set<string>();
  for (const file of roots.flatMap(sourceFiles)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:fixedCode|retryLater)\('\w+', '([A-Z][A-Z0-9_]+)'\)|super\('([A-Z][A-Z0-9_]+)'/g)) codes.add(m[1] ?? m[2]);
    if (file.includes(`${path.sep}errors${path.sep}`)) for (const m of text.matchAll(/\bcode = '([A-Z][A-Z0-9_]+)'/g)) codes.add(m[1]);
    for (const m of text.matchAll(/new NotFoundError\('(\w+)'/g)) codes.add(`${m[1].toUpperCase()}_NOT_FOUND`);
    for (const m of text.matchAll(/new (?:ConflictError|GoneError|InvalidArgumentError)\(/g)) {
      let depth = 0;
      let end = m.index + m[0].length - 1;
      for (; end < text.length; end++) {
        if (text[end] === '(') depth++;
        else if (text[end] === ')' && --depth === 0) break;
      }
      for (const literal of text.slice(m.index, end).matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) codes.add(literal[1]);
    }
  }
  return codes;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [full] : [];
  });
}
