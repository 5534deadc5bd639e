/**
 * Command-line flags from product defaults plus extraArgs. An extra flag the product also sets (one it
 * defaults but does not own, such as --service-cluster-ip-range) replaces the default in place; other
 * extra flags follow in name order, so the rendering is stable whatever order the spec lists them in.
 */
export function buildArgs(defaults: Array<[string, string]>, extra: Record<string, string>): string[] {
  const seen = new Set<string>();
  const args = defaults.map(([flag, value]) => {
    seen.add(flag);
    return `--${flag}=${extra[flag] ?? value}`;
  });
  for (const flag of Object.keys(extra).sort()) {
    if (!seen.has(flag)) args.push(`--${flag}=${extra[flag]}`);
  }
  return args;
}
