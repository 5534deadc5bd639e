/**
 * Bootstrap: keep the pool-spirit apiserver holding what the bootstrap ConfigMap says. Applies on the
 * agent's first pass (etcd is in memory, a new pod starts empty), whenever the ConfigMap's content or
 * hash annotation changes, and when an applied object has gone missing; otherwise a pass only reads.
 */
import type { KubeObject } from '../../core/kube.ts';
import type { HostCluster } from '../adapters/host.ts';
import type { OwnApiserver } from '../adapters/own-apiserver.ts';
import {
  applyPhases,
  bootstrapIdentity,
  crdEstablished,
  describeObject,
  isCrd,
  parseBootstrapConfigMap,
} from '../decide/bootstrap.ts';
import type { ReportSection } from '../decide/report.ts';
import type { Logger } from '../log.ts';
import { sleep } from '../sleep.ts';
import type { AgentStats } from '../stats.ts';

export type BootstrapStatus = { appliedHash?: string; appliedTime?: string };

export interface BootstrapStepDeps {
  host: HostCluster;
  own: OwnApiserver;
  namespace: string;
  configMap: string;
  section: ReportSection<BootstrapStatus>;
  stats: AgentStats;
  log: Logger;
  now: () => Date;
  /** How long CRDs may take to become Established before the pass fails (and is retried). */
  crdEstablishTimeoutMs: number;
}

export class BootstrapStep {
  private readonly d: BootstrapStepDeps;
  private applied: { identity: string; manifests: KubeObject[] } | undefined;

  constructor(deps: BootstrapStepDeps) {
    this.d = deps;
  }

  async run(signal: AbortSignal): Promise<void> {
    const { host, namespace, configMap, log } = this.d;
    const cm = await host.readConfigMap(namespace, configMap);
    if (!cm) throw new Error(`bootstrap ConfigMap ${namespace}/${configMap} not found in the host cluster`);
    const content = parseBootstrapConfigMap(cm);
    const identity = bootstrapIdentity(content);
    if (content.annotationHash && content.annotationHash !== content.contentHash) {
      log.warn('bootstrap hash annotation does not match the manifests; reporting the hash of what was applied', {
        annotationHash: content.annotationHash,
        contentHash: content.contentHash,
      });
    }

    let reason: string;
    if (!this.applied) reason = 'first pass since start';
    else if (this.applied.identity !== identity) reason = 'bootstrap content changed';
    else {
      const missing = await this.firstMissing(content.manifests);
      if (!missing) return;
      reason = `${describeObject(missing)} is missing`;
    }

    log.info('applying bootstrap manifests', { reason, hash: content.contentHash, objects: content.manifests.length });
    await this.apply(content.manifests, signal);
    this.applied = { identity, manifests: content.manifests };
    const appliedTime = this.d.now().toISOString();
    this.d.stats.bootstrap.applies++;
    this.d.stats.bootstrap.appliedHash = content.contentHash;
    this.d.stats.bootstrap.appliedTime = appliedTime;
    this.d.section.force({ appliedHash: content.contentHash, appliedTime });
    log.info('bootstrap applied', { hash: content.contentHash });
  }

  private async apply(manifests: KubeObject[], signal: AbortSignal): Promise<void> {
    const { foundation, rest } = applyPhases(manifests);
    for (const obj of foundation) await this.applyOne(obj);
    for (const crd of foundation.filter(isCrd)) await this.waitEstablished(crd, signal);
    for (const obj of rest) await this.applyOne(obj);
  }

  private async applyOne(obj: KubeObject): Promise<void> {
    try {
      await this.d.own.apply(obj);
    } catch (err) {
      throw new Error(`applying ${describeObject(obj)}: ${(err as Error).message.split('\n')[0]}`, { cause: err });
    }
    this.d.stats.bootstrap.objectsApplied++;
  }

  private async waitEstablished(crd: KubeObject, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + this.d.crdEstablishTimeoutMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      if (crdEstablished(await this.d.own.read(crd))) return;
      if (Date.now() > deadline)
        throw new Error(`${describeObject(crd)} not Established after ${this.d.crdEstablishTimeoutMs} ms`);
      await sleep(delay, signal);
      if (signal.aborted) throw new Error('stopped while waiting for CRDs to be Established');
    }
  }

  private async firstMissing(manifests: KubeObject[]): Promise<KubeObject | undefined> {
    for (const obj of manifests) if (!(await this.d.own.read(obj))) return obj;
    return undefined;
  }
}
