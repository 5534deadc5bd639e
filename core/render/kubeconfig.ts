/**
 * The kubeconfig the pool-spirit's agent uses, written without a YAML library.
 *
 * Why not `yaml`'s stringify: this and the bootstrap manifests (pre-rendered, bootstrap-manifests.json) were
 * the only YAML the reconcile and audit functions write, and loading the library's writer (~100 KB of
 * minified code) cost every cold start ~10 ms of the ~80 ms a bundle takes to load (docs/deploy.md). The
 * shape is fixed, so only its scalars vary; each is written plain where YAML (1.1 and 1.2) reads it back as
 * the same string, and otherwise double-quoted as JSON, which is valid YAML. The output is byte-identical to
 * `yaml.stringify(…, { lineWidth: 0 })` for every name the reconciler renders (test/core/render/kubeconfig.test.ts).
 */

/**
 * Starts with a letter; no spaces, `#`, quotes, brackets, commas or other indicators; does not end in `:`;
 * and is not a word some YAML reads as a boolean or null (1.1's yes/no/on/off included: client-go's YAML is 1.1).
 */
const PLAIN = /^[A-Za-z][A-Za-z0-9._/+=:@-]*$/;
const SPECIAL_WORD = /^(?:y|n|yes|no|on|off|true|false|null)$/i;

function scalar(value: string): string {
  return PLAIN.test(value) && !value.endsWith(':') && !SPECIAL_WORD.test(value) ? value : JSON.stringify(value);
}

/** A kubeconfig with embedded client certificate: derived from the PKI, so it is as stable as the PKI. */
export function kubeconfigYaml(input: {
  cluster: string;
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user: string;
}): string {
  const b64 = (s: string) => scalar(Buffer.from(s).toString('base64'));
  const cluster = scalar(input.cluster);
  const user = scalar(input.user);
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `  - name: ${cluster}`,
    '    cluster:',
    `      server: ${scalar(input.server)}`,
    `      certificate-authority-data: ${b64(input.caPem)}`,
    'users:',
    `  - name: ${user}`,
    '    user:',
    `      client-certificate-data: ${b64(input.certPem)}`,
    `      client-key-data: ${b64(input.keyPem)}`,
    'contexts:',
    `  - name: ${cluster}`,
    '    context:',
    `      cluster: ${cluster}`,
    `      user: ${user}`,
    `current-context: ${cluster}`,
    'preferences: {}',
    '',
  ].join('\n');
}
