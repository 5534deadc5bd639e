import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialFiles, credentialFilesOf, nextCredentialChange } from '../../agent/credential-files.ts';

describe('the agent watching its credential files', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names the kubeconfig and every etcd client file the agent reads', () => {
    expect(
      credentialFilesOf({
        kubeconfig: '/k/kubeconfig',
        etcd: { endpoints: ['https://127.0.0.1:1'], caFile: '/e/ca.crt', certFile: '/e/c.crt', keyFile: '/e/c.key' },
      }),
    ).toEqual(['/k/kubeconfig', '/e/ca.crt', '/e/c.crt', '/e/c.key']);
    expect(credentialFilesOf({ kubeconfig: '/k/kubeconfig' })).toEqual(['/k/kubeconfig']);
  });

  it('reports a change of content once, not a rewrite of the same bytes, nor a file missing mid-swap', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-creds-'));
    const cert = join(dir, 'client.crt');
    const key = join(dir, 'client.key');
    await writeFile(cert, 'cert-1');
    await writeFile(key, 'key-1');
    const files = new CredentialFiles([cert, key]);
    expect(files.changed()).toBe(false);
    await writeFile(cert, 'cert-1');
    expect(files.changed()).toBe(false);
    await rm(key);
    expect(files.changed()).toBe(false);
    await writeFile(`${key}.new`, 'key-2');
    await rename(`${key}.new`, key);
    expect(files.changed()).toBe(true);
    expect(files.changed()).toBe(false);
  });

  it('resolves on the first change while polling, and stops polling when aborted', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ps-creds-'));
    const file = join(dir, 'kubeconfig');
    await writeFile(file, 'a');
    const files = new CredentialFiles([file]);
    const stop = new AbortController();
    const seen = nextCredentialChange(files, 10, stop.signal);
    await writeFile(file, 'b');
    await expect(seen).resolves.toBeUndefined();
    stop.abort();
  });
});
