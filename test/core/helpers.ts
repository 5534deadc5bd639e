import type { KubeObject, RenderResult } from '../../core/index.ts';
import * as x509 from '../../shared/x509.ts';

export function find(result: RenderResult | KubeObject[], kind: string, name?: string): KubeObject {
  const objects = Array.isArray(result) ? result : result.objects;
  const hit = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!hit) throw new Error(`no ${kind}${name ? ` ${name}` : ''} rendered`);
  return hit;
}

export function secretData(result: RenderResult, name: string): Record<string, string> {
  const data = find(result, 'Secret', name).data as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** All Secret data of a render, decoded and merged: what the adapter would pass back as existingPki. */
export function pkiOf(result: RenderResult): Record<string, string> {
  return Object.assign(
    {},
    ...result.objects.filter((o) => o.kind === 'Secret').map((s) => secretData(result, s.metadata.name)),
  );
}

export function cert(pem: string): x509.X509Certificate {
  return new x509.X509Certificate(pem);
}

export function sans(pem: string): string[] {
  return (cert(pem).getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON() ?? [])
    .map((n) => `${n.type}:${n.value}`)
    .sort();
}

export type Any = any;

export function podSpec(result: RenderResult): Any {
  return (find(result, 'Deployment').spec as Any).template.spec;
}

export function container(result: RenderResult, name: string): Any {
  return podSpec(result).containers.find((c: { name: string }) => c.name === name);
}

export function flags(result: RenderResult, name: string): Record<string, string> {
  return Object.fromEntries(
    (container(result, name).args as string[]).map((a) => {
      const [flag, ...rest] = a.replace(/^--/, '').split('=');
      return [flag, rest.join('=')];
    }),
  );
}

export { x509 };
