/**
 * A small Dockerfile reader for the static checks of infra/images (no docker on this machine): instructions
 * with continuations joined, grouped by stage.
 */
export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  /** The image (or earlier stage) it starts from. */
  from: string;
  name?: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) return;
    if (pending && line.startsWith('#')) return;
    if (!pending) startLine = i + 1;
    pending += (pending ? ' ' : '') + line.replace(/\\$/, '').trim();
    if (line.endsWith('\\')) return;
    const m = /^(\S+)\s*(.*)$/.exec(pending)!;
    instructions.push({ keyword: m[1].toUpperCase(), args: m[2], line: startLine });
    pending = '';
  });
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.keyword === 'FROM') {
      const parts = ins.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      const asAt = parts.findIndex((p) => p.toUpperCase() === 'AS');
      stages.push({ from: parts[0], name: asAt > 0 ? parts[asAt + 1] : undefined, instructions: [] });
    } else if (stages.length) {
      stages.at(-1)!.instructions.push(ins);
    } else if (ins.keyword !== 'ARG') {
      throw new Error(`line ${ins.line}: ${ins.keyword} before the first FROM`);
    }
  }
  return stages;
}

/** Source paths of the COPY instructions of a stage that copy from the build context (not --from). */
export function contextCopies(stage: Stage): string[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY' && !/--from=/.test(i.args))
    .flatMap((i) => {
      const parts = i.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      return parts.slice(0, -1);
    });
}
