/**
 * kubectl (1.36) reading the served OpenAPI v3: explain follows the `$ref`s, `kubectl apply` with its
 * default validation leaves validation to the server (fieldValidation=Strict), and client-side apply
 * computes a strategic merge patch with the merge keys from the components.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubectlEnv, startKubectlEnv } from '../kubectl-harness.ts';

const deployment = (image: string, extra = '') => `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ${image}
        env: [{name: A, value: "1"}]
      - {name: side, image: busybox}
${extra}`;

describe('kubectl and the OpenAPI v3 documents', () => {
  let env: KubectlEnv;
  beforeAll(async () => {
    env = await startKubectlEnv('memory');
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('explain walks nested kinds by reference', async () => {
    const out = await env.ok(['explain', 'deployments.spec.template.spec.containers']);
    expect(out).toContain('FIELD: containers <[]Container>');
    expect(out).toMatch(/name\s+<string> -required-/);
    expect(out).toMatch(/ports\s+<\[\]ContainerPort>/);
    const port = await env.ok(['explain', 'pods.spec.containers.livenessProbe.httpGet.port']);
    expect(port).toContain('port');
  });

  it('apply with default validation asks the server to validate strictly', async () => {
    const created = await env.kubectl(['apply', '-f', '-', '-v=6'], { stdin: deployment('nginx:1.25') });
    expect(created.code, created.stderr).toBe(0);
    // kubectl's -v=6 request log: `verb="POST" url="…"` (structured, as 1.36 prints it).
    expect(created.stderr).toMatch(
      /verb="POST" url="\S+\/apis\/apps\/v1\/namespaces\/default\/deployments\?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"/,
    );

    const bad = await env.kubectl(['apply', '-f', '-'], {
      stdin: deployment('nginx:1.25', '  bogus: 1\n').replace('name: web,', 'name: web2,'),
    });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('strict decoding error: unknown field "spec.bogus"');
  });

  it('client-side apply sends a strategic merge patch built from the published merge keys', async () => {
    const r = await env.kubectl(['apply', '-f', '-', '-v=8'], { stdin: deployment('nginx:1.26') });
    expect(r.stderr).toContain('Content-Type: application/strategic-merge-patch+json');
    // kubectl -v=8 logs the body as an escaped JSON string.
    expect(r.stderr.replaceAll('\\"', '"')).toContain('"$setElementOrder/containers":[{"name":"web"},{"name":"side"}]');
    expect(r.stderr).not.toContain('error calculating patch from openapi');
  });
});
