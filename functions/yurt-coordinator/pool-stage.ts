/**
 * What a reconcile pass of one pool does about the kube-system yurt-coordinator objects
 * (cluster-objects.ts converges them): a compat pool converges them and reports the result as its
 * YurtCoordinatorObjectsReady condition; a pool that left compat, or whose NodePool is gone, is taken out of
 * them; a paused pool writes nothing.
 *
 * A missing install (404) or missing Role (403) ends the pass normally with the condition False, naming what
 * to apply: the operator's to fix, so it is not thrown into the platform's retries. Installing it triggers
 * nothing by itself; the condition says to request a reconcile (docs/operations.md), and any later change
 * of a compat pool does it too.
 */

import type { ClusterClient } from '../../adapters/kubernetes/index.ts';
import type { KubeObject } from '../../core/kube.ts';
import {
  CERTS_SECRET,
  COMPAT_COMPONENT_PATH,
  COORDINATOR_SLICES,
  describeForeignWrites,
} from '../../core/yurt-coordinator/index.ts';
import type { ReconcileDeps } from '../reconcile/deps.ts';
import { type CoordinatorObjects, convergeCoordinatorObjects } from './cluster-objects.ts';
import type { CompatInput } from './compat-input.ts';
import { clientPairOf, readCoordinatorPki } from './read.ts';

export type YurtCoordinatorCondition = { status: 'True' | 'False'; reason: string; message: string };
export const COORDINATOR_CONDITION = 'YurtCoordinatorObjectsReady';

/** The PoolSpirit condition of a compat pool: what the converge found, and the Services the render read. */
export function coordinatorCondition(result: CoordinatorObjects, missingServices: string[]): YurtCoordinatorCondition {
  const missing = [...missingServices, ...(result.kind === 'not-installed' ? result.missing : [])];
  if (missing.length > 0) {
    return {
      status: 'False',
      reason: 'NotInstalled',
      message: `kube-system ${missing.join(', ')}: apply ${COMPAT_COMPONENT_PATH} (docs/yurthub.md), then request a reconcile of one compat pool`,
    };
  }
  if (result.kind === 'rejected') return { status: 'False', reason: 'Rejected', message: result.message };
  if (result.kind === 'converged' && result.foreignWrites.length > 0) {
    return {
      status: 'False',
      reason: 'ForeignWriter',
      message:
        `kube-system ${CERTS_SECRET} was written by ${describeForeignWrites(result.foreignWrites)}; its keys were ` +
        "written back. yurt-manager's yurtcoordinatorcert controller rewrites them at every start, and hubs starting " +
        'meanwhile get a CA that verifies no pool-spirit: run yurt-manager with --controllers=*,-yurtcoordinatorcert ' +
        '(docs/openyurt.md)',
    };
  }
  return {
    status: 'True',
    reason: 'Applied',
    message: `kube-system ${CERTS_SECRET} and the EndpointSlices ${COORDINATOR_SLICES.map((s) => s.name).join(', ')} hold the cluster's ${result.kind === 'converged' ? result.pools : 0} compat pools`,
  };
}

function conditionOf(poolSpirit: KubeObject | undefined): Record<string, string> | undefined {
  const conditions = (poolSpirit?.status as { conditions?: Array<Record<string, string>> } | undefined)?.conditions;
  return conditions?.find((c) => c.type === COORDINATOR_CONDITION);
}

/** The pool was compat when its status was last written: leaving compat must take it out of the objects. */
export function hadCoordinatorObjects(poolSpirit: KubeObject | undefined): boolean {
  return conditionOf(poolSpirit) !== undefined;
}

/** The condition as the last status had it (a paused pool keeps it). */
export function carriedCondition(poolSpirit: KubeObject): YurtCoordinatorCondition | undefined {
  const c = conditionOf(poolSpirit);
  if (c?.status !== 'True' && c?.status !== 'False') return undefined;
  return { status: c.status, reason: c.reason ?? '', message: c.message ?? '' };
}

/**
 * A pool that left compat (or whose NodePool is gone): the objects are rendered again without it. Only
 * where the cluster has a coordinator PKI, i.e. had a compat pool; a missing install is nothing to clean.
 */
export async function leaveCoordinatorObjects(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
  compatRefused: boolean,
): Promise<string[]> {
  const files = await readCoordinatorPki(client, namespace);
  const pair = files && clientPairOf(files);
  if (!pair) return [];
  const result = await convergeCoordinatorObjects(deps, client, namespace, pair, compatRefused);
  return result.kind === 'converged' ? result.applied : [];
}

/**
 * Stage 3b of a pass, after the pool's own objects: a compat pool converges the objects and reports them
 * as a condition; a pool that just left compat is taken out of them; a paused pool writes nothing and
 * keeps its condition as it was.
 */
export async function coordinatorObjectsFor(
  deps: ReconcileDeps,
  client: ClusterClient,
  namespace: string,
  pool: {
    compat: CompatInput | undefined;
    poolSpirit: KubeObject;
    paused: boolean;
    /** The cluster's hubs have no coordinator client. */
    compatRefused: boolean;
    /** This pool asked for compat and was refused: the objects are rendered without any pool of the cluster. */
    refused: boolean;
  },
): Promise<{ applied: string[]; condition?: YurtCoordinatorCondition }> {
  const { compat, poolSpirit, paused, compatRefused, refused } = pool;
  if (paused) return { applied: [], condition: compat ? carriedCondition(poolSpirit) : undefined };
  if (!compat) {
    const left =
      refused || hadCoordinatorObjects(poolSpirit)
        ? await leaveCoordinatorObjects(deps, client, namespace, compatRefused)
        : [];
    return { applied: left };
  }
  const result = await convergeCoordinatorObjects(deps, client, namespace, compat.client);
  return {
    applied: result.kind === 'converged' ? result.applied : [],
    condition: coordinatorCondition(result, compat.missing),
  };
}
