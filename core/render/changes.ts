import type { KubeObject } from '../kube.ts';
import type { ComponentVersions } from '../poolspirit/api.ts';
import { ANNOTATIONS } from './workload.ts';

/**
 * A component version change between the live workload and the desired one. Every pod roll starts a new
 * in-memory etcd (the YurtHubs re-upload pool data), but only an etcd change is a *planned re-seed*:
 * etcd is never upgraded in place, and the reconciler records and announces it rather than letting it
 * happen silently. An apiserver or agent change simply rolls.
 */
export interface ComponentChange {
  component: 'apiServer' | 'etcd' | 'agent';
  from: string;
  to: string;
  kind: 'roll' | 'reseed';
}

/** Versions a Deployment's pod template says it runs (from the annotations the renderer writes). */
export function workloadVersions(deployment: KubeObject | undefined): ComponentVersions | undefined {
  const annotations = (
    deployment?.spec as { template?: { metadata?: { annotations?: Record<string, string> } } } | undefined
  )?.template?.metadata?.annotations;
  if (!annotations) return undefined;
  return {
    bundle: annotations[ANNOTATIONS.bundle],
    apiServer: annotations[ANNOTATIONS.apiServerVersion],
    etcd: annotations[ANNOTATIONS.etcdVersion],
    agent: annotations[ANNOTATIONS.agentVersion],
  };
}

export function componentChanges(live: KubeObject | undefined, desired: ComponentVersions): ComponentChange[] {
  const current = workloadVersions(live);
  if (!current) return []; // nothing running yet: a first start is not a change
  const out: ComponentChange[] = [];
  for (const component of ['apiServer', 'etcd', 'agent'] as const) {
    const from = current[component];
    const to = desired[component];
    if (from && to && from !== to) out.push({ component, from, to, kind: component === 'etcd' ? 'reseed' : 'roll' });
  }
  return out;
}
