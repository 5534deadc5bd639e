import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  AccessPolicyError,
  checkServerUrl,
  KUBECONFIG_MAX_BYTES,
  oversizedKubeconfig,
} from '../../adapters/cluster-access/policy.ts';
import { connectionFromKubeconfig, KubeconfigError } from '../../adapters/kubernetes/http/kubeconfig.ts';
import type { ClusterAccess, ClusterRegistration } from '../../adapters/state-table/registry.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../command.ts';
import { openStateTable, STATE_TABLE_DETAILS, stateTableFlags } from './state-table-flags.ts';

const LABEL_KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** `k=v` → [k, v], with the Kubernetes label syntax (so selectors read the same everywhere). */
export function parseLabel(flag: string, text: string): [string, string] {
  const eq = text.indexOf('=');
  if (eq <= 0) throw new UsageError(`--${flag} expects key=value, got "${text}"`);
  const [key, value] = [text.slice(0, eq), text.slice(eq + 1)];
  if (!LABEL_KEY.test(key))
    throw new UsageError(`--${flag}: "${key}" is not a valid label key (e.g. region, rollout-group, example.com/tier)`);
  if (!LABEL_VALUE.test(value))
    throw new UsageError(`--${flag}: "${value}" is not a valid label value (at most 63 of A-Z a-z 0-9 - _ .)`);
  return [key, value];
}

function labelsOf(flag: string, raw: unknown): Record<string, string> {
  return Object.fromEntries(((raw as string[] | undefined) ?? []).map((l) => parseLabel(flag, l)));
}

function readCaFile(file: unknown): string {
  if (typeof file !== 'string') throw new UsageError('--ca-file FILE is required with --eks');
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--ca-file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca-file: ${file} holds no PEM certificate`);
  return Buffer.from(pem).toString('base64');
}

/** A URL flag (--url, --endpoint) checked against the cluster access policy the functions apply. */
function checkUrlFlag(flag: string, value: string): string {
  try {
    checkServerUrl(value, `--${flag}`);
  } catch (err) {
    // The message names the flag and the rule, not the URL (it may carry a user name or password).
    if (err instanceof AccessPolicyError) throw new UsageError(err.message);
    throw err;
  }
  return value;
}

/**
 * Reads the kubeconfig and applies the checks the functions apply when they load it (same code:
 * connectionFromKubeconfig and the access policy), so a refused kubeconfig is never registered.
 */
function checkKubeconfigFile(path: string, context: string | undefined): void {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a file'), { code: 'EISDIR' });
      const buffer = Buffer.alloc(KUBECONFIG_MAX_BYTES + 1);
      let length = 0;
      while (length < buffer.length) {
        const n = readSync(fd, buffer, length, buffer.length - length, null);
        if (n <= 0) break;
        length += n;
      }
      if (length > KUBECONFIG_MAX_BYTES) throw new UsageError(`--kubeconfig ${path}: ${oversizedKubeconfig().message}`);
      text = buffer.subarray(0, length).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UsageError(`--kubeconfig: ${path} does not exist`);
    throw new UsageError(`--kubeconfig: cannot read ${path}: ${code ?? 'error'}`);
  }
  try {
    connectionFromKubeconfig(text, context ? { context } : {});
  } catch (err) {
    // KubeconfigError messages name the field and the rule, never a token, key or certificate.
    if (err instanceof KubeconfigError) throw new UsageError(`--kubeconfig ${path}: ${err.message}`);
    throw err;
  }
}

/** Exactly one way to reach the cluster; the flags that go with it are checked here. */
export function accessFromFlags(v: Record<string, unknown>): ClusterAccess {
  const ways = (['kubeconfig', 'url', 'eks', 'secret'] as const).filter((k) => v[k] !== undefined);
  if (ways.length !== 1) {
    throw new UsageError(
      `give exactly one of --kubeconfig FILE, --url URL, --eks NAME or --secret ID${ways.length ? ` (got ${ways.map((w) => `--${w}`).join(', ')})` : ''}`,
    );
  }
  const context = v.context as string | undefined;
  switch (ways[0]) {
    case 'kubeconfig': {
      const path = resolve(String(v.kubeconfig));
      checkKubeconfigFile(path, context);
      return { kind: 'kubeconfig-file', path, ...(context ? { context } : {}) };
    }
    case 'url':
      return {
        kind: 'url',
        url: checkUrlFlag('url', String(v.url)),
        ...(v['ca-file'] !== undefined ? { caData: readCaFile(v['ca-file']) } : {}),
        ...(v['insecure-skip-tls-verify'] ? { insecureSkipTlsVerify: true } : {}),
      };
    case 'eks':
      if (!v.region) throw new UsageError('--region is required with --eks (e.g. eu-west-1)');
      if (!v.endpoint)
        throw new UsageError(
          '--endpoint URL is required with --eks (the cluster API endpoint, from `aws eks describe-cluster`)',
        );
      return {
        kind: 'eks',
        clusterName: String(v.eks),
        region: String(v.region),
        endpoint: checkUrlFlag('endpoint', String(v.endpoint)),
        caData: readCaFile(v['ca-file']),
      };
    case 'secret':
      return {
        kind: 'secret',
        secretId: String(v.secret),
        ...(v.region ? { region: String(v.region) } : {}),
        ...(context ? { context } : {}),
      };
  }
}

/** How a registration reaches its cluster, in a few words (never credentials: there are none stored). */
export function describeAccess(access: ClusterAccess): string {
  switch (access.kind) {
    case 'kubeconfig-file':
      return `kubeconfig ${access.path}${access.context ? ` (context ${access.context})` : ''}`;
    case 'url':
      return `url ${access.url}`;
    case 'eks':
      return `eks ${access.clusterName} (${access.region})`;
    case 'secret':
      return `secret ${access.secretId}`;
  }
}

const formatLabels = (labels: Record<string, string>) =>
  Object.entries(labels)
    .sort()
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '-';

export const clustersAdd: Command = {
  path: ['clusters', 'add'],
  summary: 'register a cluster in the fleet (how to reach it, and labels)',
  options: {
    id: { type: 'string', valueName: 'ID', description: 'cluster id: a DNS label, e.g. edge-eu-1' },
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'reach it with this kubeconfig file (local clusters)',
    },
    context: {
      type: 'string',
      valueName: 'NAME',
      description: 'with --kubeconfig or --secret: the kubeconfig context',
    },
    url: { type: 'string', valueName: 'URL', description: 'reach it at this API URL, anonymously (local clusters)' },
    'insecure-skip-tls-verify': { type: 'boolean', description: 'with --url: do not verify the server certificate' },
    eks: {
      type: 'string',
      valueName: 'NAME',
      description: "an EKS cluster: IAM token signed with the functions' role",
    },
    region: { type: 'string', valueName: 'REGION', description: 'with --eks (required) or --secret: the AWS region' },
    endpoint: { type: 'string', valueName: 'URL', description: 'with --eks: the cluster API endpoint' },
    'ca-file': {
      type: 'string',
      valueName: 'FILE',
      description: 'with --eks (required) or --url: PEM CA bundle of the API server',
    },
    secret: { type: 'string', valueName: 'ID', description: 'a kubeconfig kept in Secrets Manager (id or ARN)' },
    label: {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description: 'a label (repeatable): region, environment, rollout-group, ...',
    },
    'openyurt-release': {
      type: 'string',
      valueName: 'vX.Y.Z',
      description:
        'the OpenYurt release it runs, where the API cannot tell (v1.6.0 from v1.6.1): decides whether compat pools are refused (docs/openyurt.md)',
    },
    replace: { type: 'boolean', description: 'replace an existing registration of this id (otherwise refused)' },
    json: { type: 'boolean', description: 'print the registration as JSON' },
    ...stateTableFlags,
  },
  details: `
Examples:
  spiritctl clusters add --id edge-eu-1 --kubeconfig ~/.kube/edge-eu-1 --label region=eu-west-1 --label rollout-group=canary
  spiritctl clusters add --id shop-eu --eks shop-eu --region eu-west-1 --endpoint https://ABC.gr7.eu-west-1.eks.amazonaws.com --ca-file ca.pem
  spiritctl clusters add --id edge-us --secret pool-spirit/dev/edge-us --region us-east-1
The registry stores where credentials are, never credentials.

What is accepted (checked here, and again by the functions each time they load a cluster's access):
  - inline credentials only: token, client-certificate-data/client-key-data, certificate-authority-data.
    Refused: exec and auth-provider users, and file references (certificate-authority, client-certificate,
    client-key, tokenFile). \`kubectl config view --minify --flatten --context NAME\` writes an inline one.
  - https servers; plain http only to a loopback address (127.0.0.0/8, ::1, localhost).
  - never a link-local or metadata address (169.254.0.0/16, fe80::/10, fd00:ec2::254, metadata.google.internal).
A --secret kubeconfig is checked by the functions when they first load it.
${STATE_TABLE_DETAILS}`,
  async run({ values }) {
    if (typeof values.id !== 'string') throw new UsageError('--id ID is required');
    const access = accessFromFlags(values);
    const labels = labelsOf('label', values.label);
    const { registerCluster, ClusterExistsError } = await import('../../adapters/state-table/registry.ts');
    const { table, close } = await openStateTable(values);
    try {
      const openYurtRelease = typeof values['openyurt-release'] === 'string' ? values['openyurt-release'] : undefined;
      const reg = await registerCluster(table, { id: values.id, access, labels, openYurtRelease }, new Date(), {
        createOnly: !values.replace,
      });
      if (values.json) process.stdout.write(`${JSON.stringify(reg, null, 2)}\n`);
      else
        process.stdout.write(
          `cluster ${reg.id} registered: ${describeAccess(reg.access)}; labels ${formatLabels(reg.labels)}\n`,
        );
      return 0;
    } catch (err) {
      if (err instanceof ClusterExistsError) throw new UsageError(`${err.message} (use --replace to overwrite it)`);
      if (err instanceof TypeError && err.message.startsWith('invalid cluster registration'))
        throw new UsageError(err.message);
      throw err;
    } finally {
      close();
    }
  },
};

export const clustersList: Command = {
  path: ['clusters', 'list'],
  summary: 'list the registered clusters',
  options: {
    selector: {
      type: 'string',
      multiple: true,
      valueName: 'K=V',
      description: 'only clusters with this label (repeatable: all must match)',
    },
    json: { type: 'boolean', description: 'print JSON ({ "clusters": [...], "count": N })' },
    ...stateTableFlags,
  },
  details: STATE_TABLE_DETAILS,
  async run({ values }) {
    const selector = labelsOf('selector', values.selector);
    const { listClusters } = await import('../../adapters/state-table/registry.ts');
    const { table, close } = await openStateTable(values);
    let clusters: ClusterRegistration[];
    try {
      clusters = await listClusters(table, selector);
    } finally {
      close();
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ clusters, count: clusters.length }, null, 2)}\n`);
      return 0;
    }
    if (clusters.length === 0) {
      process.stdout.write('no clusters registered\n');
      return 0;
    }
    const rows = clusters.map((c) => [c.id, describeAccess(c.access), formatLabels(c.labels), c.updatedAt ?? '']);
    const header = ['ID', 'ACCESS', 'LABELS', 'UPDATED'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (cells: string[]) =>
      cells
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    process.stdout.write(`${[line(header), ...rows.map(line)].join('\n')}\n${clusters.length} cluster(s)\n`);
    return 0;
  },
};

export const clustersRemove: Command = {
  path: ['clusters', 'remove'],
  summary: 'remove a cluster from the registry (the cluster itself is not touched)',
  positionals: [{ name: 'id', description: 'cluster id', required: true }],
  options: { ...stateTableFlags },
  details: STATE_TABLE_DETAILS,
  async run({ values, positionals }) {
    return removeOrLabel(positionals, values, async (table, id) => {
      const { deregisterCluster } = await import('../../adapters/state-table/registry.ts');
      if (!(await deregisterCluster(table, id))) {
        process.stderr.write(`spiritctl clusters remove: cluster ${id} is not registered\n`);
        return 1;
      }
      process.stdout.write(`cluster ${id} removed\n`);
      return 0;
    });
  },
};

async function removeOrLabel(
  positionals: string[],
  values: Record<string, unknown>,
  fn: (table: import('../../adapters/state-table/index.ts').StateTable, id: string) => Promise<number>,
): Promise<number> {
  const { table, close } = await openStateTable(values);
  try {
    return await fn(table, positionals[0]);
  } finally {
    close();
  }
}

export const clustersLabel: Command = {
  path: ['clusters', 'label'],
  summary: 'add, change or remove labels of a registered cluster (kubectl label syntax)',
  positionals: [
    { name: 'id', description: 'cluster id', required: true },
    {
      name: 'k=v | k-',
      description: 'labels to set (k=v) or remove (k-), one or more',
      required: true,
      variadic: true,
    },
  ],
  options: { json: { type: 'boolean', description: 'print the registration as JSON' }, ...stateTableFlags },
  details: `
Examples:
  spiritctl clusters label edge-eu-1 rollout-group=wave-1 environment=prod
  spiritctl clusters label edge-eu-1 rollout-group-
${STATE_TABLE_DETAILS}`,
  async run({ values, positionals }) {
    const [id, ...changes] = positionals;
    if (changes.length === 0) throw new UsageError('give at least one label change: k=v to set, k- to remove');
    const set: Record<string, string> = {};
    const remove: string[] = [];
    for (const change of changes) {
      if (change.endsWith('-') && !change.includes('=')) remove.push(change.slice(0, -1));
      else {
        const [k, v] = parseLabel('label', change);
        set[k] = v;
      }
    }
    return removeOrLabel([id], values, async (table, clusterId) => {
      const { getCluster, registerCluster } = await import('../../adapters/state-table/registry.ts');
      const current = await getCluster(table, clusterId);
      if (!current) {
        process.stderr.write(`spiritctl clusters label: cluster ${clusterId} is not registered\n`);
        return 1;
      }
      const labels = { ...current.labels, ...set };
      for (const k of remove) delete labels[k];
      const { access, openYurtRelease } = current;
      const reg = await registerCluster(table, { id: clusterId, access, labels, openYurtRelease }, new Date());
      if (values.json) process.stdout.write(`${JSON.stringify(reg, null, 2)}\n`);
      else process.stdout.write(`cluster ${clusterId} labels: ${formatLabels(reg.labels)}\n`);
      return 0;
    });
  },
};

export const clustersCommands: Command[] = [clustersAdd, clustersList, clustersRemove, clustersLabel];
