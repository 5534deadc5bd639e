/**
 * A rendered container's args, rewritten for a process on this host the way a kubelet's mounts and a pod's
 * network namespace would make them true: a path under a volume's mountPath moves to the host directory
 * that holds the volume's files, and a pod port moves to the loopback port the OS handed out (every pool-spirit
 * on one machine shares one network namespace). Nothing else is touched, so a flag the binary rejects is
 * the rendered flag, and the translation is returned to be logged.
 */
export interface ArgTranslation {
  flag: string;
  rendered: string;
  translated: string;
}

export interface TranslatedArgs {
  args: string[];
  translations: ArgTranslation[];
}

export interface HostLayout {
  /** mountPath in the container → directory on this host. */
  mounts: Record<string, string>;
  /** Port in the pod → port on this host. */
  ports: Record<number, number>;
}

export function translateContainerArgs(args: readonly string[], layout: HostLayout): TranslatedArgs {
  const translations: ArgTranslation[] = [];
  // Longest mount first, so a nested mount wins over its parent.
  const mounts = Object.entries(layout.mounts).sort(([a], [b]) => b.length - a.length);
  const translated = args.map((arg) => {
    const eq = arg.indexOf('=');
    if (!arg.startsWith('--') || eq < 0) return arg;
    const flag = arg.slice(2, eq);
    const rendered = arg.slice(eq + 1);
    const value = rendered
      .split(',')
      .map((item) => translatePorts(translatePath(loopbackListener(item), mounts), layout.ports))
      .join(',');
    if (value === rendered) return arg;
    translations.push({ flag, rendered, translated: value });
    return `--${flag}=${value}`;
  });
  return { args: translated, translations };
}

function translatePath(item: string, mounts: Array<[string, string]>): string {
  // A list item may be `name=value` (etcd's --initial-cluster): only the value is a path.
  const at = item.indexOf('=') + 1;
  const value = item.slice(at);
  for (const [mountPath, hostDir] of mounts) {
    if (value === mountPath || value.startsWith(`${mountPath}/`))
      return item.slice(0, at) + hostDir + value.slice(mountPath.length);
  }
  return item;
}

/**
 * A URL on every address (`https://0.0.0.0:12382`: a yurt-coordinator-compatible pool's etcd proxy, the etcd
 * metrics listener) serves only loopback here: every pool-spirit shares this host's network namespace, and
 * a local server listens on 127.0.0.1 alone.
 */
function loopbackListener(item: string): string {
  return item.replace(/^([a-z]+:\/\/)0\.0\.0\.0:/, '$1127.0.0.1:');
}

function translatePorts(item: string, ports: Record<number, number>): string {
  const bare = Number(item);
  if (/^\d+$/.test(item) && ports[bare] !== undefined) return String(ports[bare]);
  // `host:port` inside a URL or address, followed by the end, a path or a query.
  return item.replace(/:(\d+)(?=$|[/?])/, (whole, port: string) =>
    ports[Number(port)] !== undefined ? `:${ports[Number(port)]}` : whole,
  );
}
