/**
 * A reader of docker/Dockerfile for the instructions it uses, so a test can run the image's
 * steps without a Docker engine. One instruction per line (the Dockerfile promises it).
 */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  /** The image or earlier stage it starts from. */
  from: string;
  name?: string;
  steps: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = line.match(/^([A-Z]+)\s+(.*)$/);
    if (!m) throw new Error(`Dockerfile line ${index + 1}: not an instruction: ${line}`);
    const [, keyword, args] = m;
    if (keyword === 'FROM') {
      const from = args.match(/^(\S+)(?:\s+AS\s+(\S+))?$/i);
      if (!from) throw new Error(`Dockerfile line ${index + 1}: FROM image [AS name]`);
      stages.push({ from: from[1], name: from[2], steps: [] });
      return;
    }
    if (stages.length === 0) throw new Error(`Dockerfile line ${index + 1}: ${keyword} before FROM`);
    stages[stages.length - 1].steps.push({ keyword, args, line: index + 1 });
  });
  return stages;
}

/** ENV k=v k2="v 2" ... */
export function parseEnv(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    out[m[1]] = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
  }
  return out;
}

/** COPY [--from=stage] src... dest */
export function parseCopy(args: string): { from?: string; sources: string[]; dest: string } {
  const words = args.split(/\s+/);
  let from: string | undefined;
  if (words[0].startsWith('--from=')) from = words.shift()!.slice('--from='.length);
  const dest = words.pop()!;
  return { from, sources: words, dest };
}
