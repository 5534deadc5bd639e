import { createHash } from 'node:crypto';
import { canonicalJson, stableHash } from '../hash.ts';
import { controllerRef, type KubeObject, type OwnerReference } from '../kube.ts';
import type { NodePool } from '../nodepool.ts';
import type { ComponentVersions } from '../poolspirit/api.ts';
import { API_VERSION, KIND } from '../poolspirit/names.ts';
import type { ResolvedPoolSpiritSpec } from '../poolspirit/resolved.ts';
import { COMPAT_LABEL, compatInEffect } from '../yurt-coordinator/compat.ts';
import {
  compatBootstrap,
  compatDeployment,
  compatLeaves,
  compatPkiFiles,
  compatSans,
  type PoolCompatInput,
} from '../yurt-coordinator/pool.ts';
import { renderBootstrap } from './bootstrap.ts';
import { type ComponentChange, componentChanges } from './changes.ts';
import type { KeyFactory } from './keys.ts';
import { managedLabels } from './labels.ts';
import { type ObjectNames, objectNames } from './names.ts';
import { applyOverrides, SpecRenderError } from './overrides.ts';
import { ensurePki, type PkiProof, pkiInputKey, pkiProofOf } from './pki.ts';
import { DAY_MS, DEFAULT_PKI_POLICY, type LeafSpec, leafSpecs, type PkiPolicy } from './pki-spec.ts';
import { renderRbac } from './rbac.ts';
import { renderSecrets } from './secrets.ts';
import { endpointFor, renderService } from './service.ts';
import { renderDeployment } from './workload.ts';

export interface RenderInput {
  /** The PoolSpirit: its name and uid (for owner references) and its parsed, defaulted spec. */
  poolSpirit: { metadata: { name: string; uid: string }; spec: ResolvedPoolSpiritSpec };
  nodePool: NodePool;
  cluster: {
    /** PEM bundle of the cluster CA(s) that sign node client certificates. */
    caBundlePem: string;
    clusterDomain: string;
    /** Namespace the owned objects live in (the product namespace). */
    namespace: string;
  };
  /** The Service's ClusterIP once it exists: then it is a SAN of the apiserver certificate. */
  serviceClusterIP?: string;
  /** Current PKI by file name (see existingPkiFromSecrets); absent or partial means issue what is missing. */
  existingPki?: Record<string, string>;
  /** The live Deployment, to report component version changes (re-seeds). */
  liveWorkload?: KubeObject;
  now: Date;
  keys: KeyFactory;
  pkiPolicy?: Partial<PkiPolicy>;
  /**
   * What an earlier render said of its PKI (RenderResult.pki.proof), kept by the caller where only the product
   * writes: when it names exactly the files of existingPki, they are reused without being checked again.
   */
  pkiProof?: PkiProof;
  /**
   * The cluster's yurt-coordinator compat material. Used only when the NodePool opts in (label
   * poolspirit.io/yurt-coordinator=compat); such a pool without it is a render error naming the field.
   */
  yurtCoordinator?: PoolCompatInput;
  /** The cluster's hubs have no coordinator client (core/yurt-coordinator/hub-support.ts): the label is ignored. */
  compatRefused?: boolean;
}

export interface RenderResult {
  /** Every desired object, in apply order, each labelled and owned by the PoolSpirit (the CA Secret: by the NodePool). */
  objects: KubeObject[];
  pki: { reused: boolean; reasons: string[]; notAfter: string; caNotAfter: string; proof: PkiProof };
  /** Hash of all desired objects: equal hashes mean nothing to do. */
  desiredHash: string;
  /** Hash of the bootstrap content; the agent reports it back once applied. */
  bootstrapHash: string;
  names: ObjectNames;
  endpoint: string;
  versions: ComponentVersions;
  /** Version changes against liveWorkload; an etcd change has kind 'reseed'. */
  changes: ComponentChange[];
}

/**
 * Renders everything a pool-spirit consists of. Pure apart from the injected key factory: the same inputs
 * (with the PKI of a previous render as existingPki) give byte-identical objects, so a steady pool never
 * causes a write. Throws SpecRenderError (with field issues) when an override does not apply.
 *
 * A steady pool asks the same question on every pass, so a render that issued nothing is remembered (per
 * process, bounded) under a hash of everything it read (renderKey), until the first renewal point of its
 * PKI, the one input that changes with time alone. The objects of a remembered render are frozen: every pass
 * that gets them shares them.
 */
export async function renderPoolSpirit(input: RenderInput): Promise<RenderResult> {
  const plan = planRender(input);
  const key = renderKey(input, plan, input.existingPki ?? {});
  const hit = recall(key, input.now);
  if (hit) return { ...hit, changes: componentChanges(input.liveWorkload, hit.versions) };
  const fresh = await renderFresh(input, plan);
  const result: RenderResult = { ...fresh.rendered, desiredHash: stableHash(fresh.rendered.objects) };
  const files = fresh.files;
  const renewAt =
    Math.min(Date.parse(result.pki.notAfter), Date.parse(result.pki.caNotAfter)) - plan.policy.renewBeforeDays * DAY_MS;
  if (result.pki.reused) remember(key, result, renewAt);
  // What was just issued is what the next pass reads back from the Secrets: its render is this one, reused.
  else
    remember(renderKey(input, plan, files), { ...result, pki: { ...result.pki, reused: true, reasons: [] } }, renewAt);
  return result;
}

/**
 * renderPoolSpirit without the hash of all desired objects, and without the memo: for a caller that only
 * compares them with what is live (the audit renders every pool of a cluster on every run, and hashing a pool's
 * objects, its Secrets' PEM text included, was a large share of that render's time).
 */
export async function renderPoolSpiritObjects(input: RenderInput): Promise<Omit<RenderResult, 'desiredHash'>> {
  return (await renderFresh(input, planRender(input))).rendered;
}

/** What a render derives from its input before anything is issued or written. */
interface RenderPlan {
  names: ObjectNames;
  labels: Record<string, string>;
  clusterIP: string | undefined;
  compat: PoolCompatInput | undefined;
  leaves: LeafSpec[];
  policy: PkiPolicy;
}

function planRender(input: RenderInput): RenderPlan {
  const { poolSpirit, nodePool, cluster } = input;
  const spec = poolSpirit.spec;
  const names = objectNames(poolSpirit.metadata.name);
  const clusterIP = input.serviceClusterIP && input.serviceClusterIP !== 'None' ? input.serviceClusterIP : undefined;
  const wantsCompat = compatInEffect(nodePool, input.compatRefused);
  const compat = wantsCompat ? input.yurtCoordinator : undefined;
  if (wantsCompat && !compat) {
    throw new SpecRenderError([
      {
        field: `nodePool.metadata.labels[${COMPAT_LABEL}]`,
        message: 'yurt-coordinator compat is asked for, but the cluster has no coordinator client CA yet',
      },
    ]);
  }
  const leaves = leafSpecs(
    names,
    cluster.namespace,
    cluster.clusterDomain,
    clusterIP,
    compat ? compatSans(compat, cluster.clusterDomain) : {},
  ).concat(compat ? compatLeaves(compat, cluster.clusterDomain) : []);
  return {
    names,
    labels: managedLabels(spec.nodePool),
    clusterIP,
    compat,
    leaves,
    policy: { ...DEFAULT_PKI_POLICY, ...input.pkiPolicy },
  };
}

/**
 * A hash of everything a render reads but the time and the key factory (which only matter when something
 * is issued, and such a render is not remembered as it is): the PoolSpirit's name, uid and spec, the
 * NodePool's identity, labels, annotations and spec (not its status, which changes as nodes come and go and
 * which the render does not read), the cluster, the Service IP, the compat input, and the PKI files the
 * check reads (pkiInputKey).
 */
function renderKey(input: RenderInput, plan: RenderPlan, files: Record<string, string>): string {
  const { metadata, apiVersion, kind, spec } = input.nodePool;
  const nodePool = {
    apiVersion,
    kind,
    metadata: { name: metadata.name, uid: metadata.uid, labels: metadata.labels, annotations: metadata.annotations },
    spec,
  };
  return createHash('sha256')
    .update(pkiInputKey({ pool: input.poolSpirit.spec.nodePool, leaves: plan.leaves, policy: plan.policy }, files))
    .update(
      canonicalJson([
        input.poolSpirit,
        nodePool,
        input.cluster,
        plan.clusterIP ?? null,
        input.compatRefused === true,
        plan.compat ?? null,
      ]),
    )
    .digest('hex');
}

const remembered = new Map<string, { result: RenderResult; renewAt: number }>();
/** Renders kept at most: a warm container's recent pools (each ~50 KB of objects and PEM text). */
const RENDER_MEMO_LIMIT = 256;

function recall(key: string, now: Date): RenderResult | undefined {
  const found = remembered.get(key);
  if (!found) return undefined;
  remembered.delete(key);
  if (now.getTime() >= found.renewAt) return undefined;
  // Most recently used last: the first is the one to drop.
  remembered.set(key, found);
  return found.result;
}

function remember(key: string, result: RenderResult, renewAt: number): void {
  deepFreeze(result.objects);
  remembered.delete(key);
  if (remembered.size >= RENDER_MEMO_LIMIT) {
    const oldest = remembered.keys().next();
    if (!oldest.done) remembered.delete(oldest.value);
  }
  remembered.set(key, { result: { ...result, changes: [] }, renewAt });
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

async function renderFresh(
  input: RenderInput,
  plan: RenderPlan,
): Promise<{ rendered: Omit<RenderResult, 'desiredHash'>; files: Record<string, string> }> {
  const { poolSpirit, nodePool, cluster } = input;
  const spec = poolSpirit.spec;
  const name = poolSpirit.metadata.name;
  const { names, labels, compat, leaves, policy } = plan;

  const pki = await ensurePki({
    pool: spec.nodePool,
    leaves,
    existing: input.existingPki ?? {},
    now: input.now,
    keys: input.keys,
    policy,
    proof: input.pkiProof,
  });
  // A compat pool's apiserver also trusts the coordinator client CA (the YurtHubs' shared identity).
  const clientCas = compat ? `${cluster.caBundlePem.trim()}\n${compat.clientCaPem.trim()}\n` : cluster.caBundlePem;
  const secrets = renderSecrets(
    pki,
    clientCas,
    names,
    cluster.namespace,
    spec.nodePool,
    compat ? compatPkiFiles(compat, pki.files) : {},
  );
  const plainBootstrap = renderBootstrap(names, cluster.namespace, labels);
  const bootstrap = compat ? compatBootstrap(plainBootstrap.configMap) : plainBootstrap;
  const rendered = renderDeployment({
    spec,
    names,
    nodePool,
    labels,
    poolSpiritName: name,
    namespace: cluster.namespace,
    bootstrapConfigMap: names.bootstrapConfigMap,
    clusterDomain: cluster.clusterDomain,
    hostNetwork: nodePool.spec?.hostNetwork === true,
    pkiHash: secrets.restartHash.slice(0, 16),
  });
  const deployment = await applyOverrides(compat ? compatDeployment(rendered, spec) : rendered, spec.overrides);

  const byPoolSpirit = ownedBy(poolSpiritRef(poolSpirit), labels);
  // The pool CA outlives its PoolSpirit: deleting and re-creating a PoolSpirit must not rotate the CA
  // every client of the pool's apiserver trusts. It goes with the NodePool
  // (docs/decisions/0004-owned-objects-authoritative.md).
  const byNodePool = ownedBy(controllerRef(nodePool), labels);
  const objects = [
    ...secrets.objects,
    bootstrap.configMap,
    ...renderRbac(names, cluster.namespace, labels),
    renderService(names, cluster.namespace, labels),
    deployment,
  ].map((obj) => (obj.kind === 'Secret' && obj.metadata.name === names.caSecret ? byNodePool(obj) : byPoolSpirit(obj)));

  const versions: ComponentVersions = {
    bundle: spec.version,
    apiServer: spec.apiServer.version,
    etcd: spec.etcd.version,
    agent: spec.agent.version,
  };
  const result: Omit<RenderResult, 'desiredHash'> = {
    objects,
    pki: {
      reused: pki.reused,
      reasons: pki.reasons,
      notAfter: pki.notAfter.toISOString(),
      caNotAfter: pki.caNotAfter.toISOString(),
      proof: pkiProofOf({ pool: spec.nodePool, leaves, policy }, pki),
    },
    bootstrapHash: bootstrap.hash,
    names,
    endpoint: endpointFor(names, cluster.namespace, cluster.clusterDomain),
    versions,
    changes: componentChanges(input.liveWorkload, versions),
  };
  return { rendered: result, files: pki.files };
}

/** The PoolSpirit as the controlling owner of what is rendered for it. */
export function poolSpiritRef(poolSpirit: { metadata: { name: string; uid: string } }): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    name: poolSpirit.metadata.name,
    uid: poolSpirit.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Labels every object with the pool's labels and makes `owner` its controlling owner. */
function ownedBy(owner: OwnerReference, labels: Record<string, string>) {
  return (obj: KubeObject): KubeObject => ({
    ...obj,
    metadata: { ...obj.metadata, labels: { ...labels, ...obj.metadata.labels }, ownerReferences: [owner] },
  });
}

/**
 * The pool's Service alone, exactly as renderPoolSpirit renders it. A new pool applies it first: its
 * ClusterIP goes into the serving certificate, so the PKI is then issued once instead of twice.
 */
export function renderPoolSpiritService(input: Pick<RenderInput, 'poolSpirit' | 'cluster'>): KubeObject {
  const names = objectNames(input.poolSpirit.metadata.name);
  const labels = managedLabels(input.poolSpirit.spec.nodePool);
  return ownedBy(poolSpiritRef(input.poolSpirit), labels)(renderService(names, input.cluster.namespace, labels));
}
