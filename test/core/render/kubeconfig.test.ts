import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { kubeconfigYaml } from '../../../core/render/kubeconfig.ts';
import { functionBundles, inputsAtStart } from '../../support/function-bundles.ts';

type Input = Parameters<typeof kubeconfigYaml>[0];

/** What the kubeconfig means: the object a YAML library would have been asked to write. */
function meaning(i: Input) {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: i.cluster, cluster: { server: i.server, 'certificate-authority-data': b64(i.caPem) } }],
    users: [{ name: i.user, user: { 'client-certificate-data': b64(i.certPem), 'client-key-data': b64(i.keyPem) } }],
    contexts: [{ name: i.cluster, context: { cluster: i.cluster, user: i.user } }],
    'current-context': i.cluster,
    preferences: {},
  };
}

/** A small seeded generator, so a failure names an input that can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const pick = (alphabet: string, min: number, max: number) =>
    Array.from(
      { length: min + Math.floor(next() * (max - min + 1)) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join('');
  return { next, pick };
}

/** The kubeconfig with its client key's data replaced by a hash of it. */
const withoutKeyData = (text: string) =>
  text.replace(
    /(client-key-data: )(\S+)/,
    (_, field: string, data: string) => `${field}sha256:${createHash('sha256').update(data).digest('hex')}`,
  );

const pem = (body: string) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`;
const DNS = 'abcdefghijklmnopqrstuvwxyz0123456789-.';
/** Pool names a NodePool may have (DNS-1123 subdomains), including ones YAML would read as other types alone. */
const TRICKY_POOLS = ['true', 'null', 'yes', 'no', 'on', '123', '1e3', '0x1f', '0o17', 'a.b', '1.5', 'inf', 'nan'];

describe('kubeconfigYaml', () => {
  it('writes exactly what yaml.stringify writes, for every pool name the reconciler renders', () => {
    const { pick } = random(20261202);
    const pools = [
      ...TRICKY_POOLS,
      ...Array.from({ length: 300 }, () => `${pick(DNS.slice(0, 36), 1, 1)}${pick(DNS, 0, 40)}`),
    ];
    for (const pool of pools) {
      const input: Input = {
        cluster: `poolspirit-${pool}`,
        server: 'https://127.0.0.1:6443',
        caPem: pem(pick('ABCDEFabcdef0123456789+/', 10, 200)),
        certPem: pem(pick('ABCDEF0123456789', 10, 200)),
        // A key made for this run (none is kept in the repository), as the reconciler's PKI makes them.
        keyPem: generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
        user: 'poolspirit:agent',
      };
      const written = kubeconfigYaml(input);
      const expected = stringify(meaning(input), { lineWidth: 0 });
      // Compared with the key's data hashed first, so that a failure's diff prints no private key.
      expect(withoutKeyData(written), pool).toBe(withoutKeyData(expected));
      expect(written === expected, pool).toBe(true);
    }
  });

  it('reads back as the same strings under YAML 1.2 and 1.1 whatever the names and server hold', () => {
    const { pick, next } = random(7);
    const awkward = ' :#"\'\\{}[],&*!|>%@`-?~\n\té€\u0000yesNoTRUE1.0e';
    const words = [
      '',
      'yes',
      'No',
      'ON',
      'off',
      'y',
      'N',
      'True',
      'NULL',
      '~',
      '-',
      'a:',
      'a: b',
      'a #b',
      '@x',
      '"q"',
      '1',
    ];
    for (let n = 0; n < 500; n++) {
      const any = () => (next() < 0.3 ? words[Math.floor(next() * words.length)] : pick(awkward + DNS, 0, 24));
      const input: Input = {
        cluster: any(),
        server: next() < 0.5 ? any() : `https://${any()}:6443`,
        caPem: any(),
        certPem: any(),
        keyPem: any(),
        user: any(),
      };
      const text = kubeconfigYaml(input);
      expect(parse(text), JSON.stringify(input)).toEqual(meaning(input));
      expect(parse(text, { version: '1.1' }), JSON.stringify(input)).toEqual(meaning(input));
    }
  });
});

/**
 * What the rewrite is for: no function compiles a YAML library on a cold start. The reconciler still parses
 * kubeconfigs, but in a chunk loaded only for a cluster reached by kubeconfig.
 */
describe('the functions load no YAML library at start', () => {
  const bundles = functionBundles('ps-yaml-bundle-');

  it.each(bundles.names)('%s', async (name) => {
    const { metafile } = await bundles.build(name);
    expect(inputsAtStart(metafile).filter((p) => p.includes('node_modules/yaml/'))).toEqual([]);
    // The check sees chunks at all: a function that reads kubeconfigs has the parser in a lazily loaded one.
    const all = Object.values(metafile.outputs).flatMap((o) => Object.keys(o.inputs));
    if (all.includes('adapters/kubernetes/http/kubeconfig.ts'))
      expect(all.some((p) => p.includes('node_modules/yaml/'))).toBe(true);
  });
});
