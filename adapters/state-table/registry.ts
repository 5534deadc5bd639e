/**
 * The cluster registry: which clusters the fleet has and how to reach each one. The access entry names
 * *where* credentials live (a file, a secret, an EKS cluster to sign a token for) — never the credentials.
 */

import type { OpenYurtObservation } from '../../core/nodepool-versions.ts';
import * as z from '../../shared/zod.ts';
import { serverUrlProblem } from '../cluster-access/policy.ts';
import { renderUpdate, setAttributes } from './expression.ts';
import { CLUSTER_PREFIX, keys, REGISTRY_PK } from './keys.ts';
import type { StateTable } from './table.ts';
import { deleteItem, getItem, isConditionFailed, queryAll, updateItem } from './table.ts';

const clusterId = z
  .string()
  .check(
    z.regex(
      /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
      'expected a DNS label: lowercase a-z, 0-9 and "-", at most 63 chars',
    ),
  );

/** Base64 of a PEM bundle, as in a kubeconfig's certificate-authority-data. */
const caData = z.string().check(z.regex(/^[A-Za-z0-9+/=\s]+$/, 'expected base64 of a PEM CA bundle'));

const awsRegion = z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'expected an AWS region such as eu-west-1'));

/**
 * An API server URL the cluster access policy accepts (https, or http to loopback; never a link-local or
 * metadata address). The functions check it again when they load the access.
 */
const serverUrl = (protocol: RegExp) =>
  z.url({ protocol }).check(
    z.superRefine((value, ctx) => {
      const problem = serverUrlProblem(value);
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: value });
    }),
  );

/** Which context of the kubeconfig to use, when not its current one. */
const kubeconfigContext = z.optional(z.string().check(z.minLength(1)));

export const ClusterAccessSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('kubeconfig-file'),
    path: z.string().check(z.minLength(1, 'expected a kubeconfig file path')),
    context: kubeconfigContext,
  }),
  z.strictObject({
    kind: z.literal('url'),
    url: serverUrl(/^https?$/),
    caData: z.optional(caData),
    insecureSkipTlsVerify: z.optional(z.boolean()),
  }),
  z.strictObject({
    kind: z.literal('eks'),
    /** EKS cluster name: the `x-k8s-aws-id` the token is bound to. */
    clusterName: z.string().check(z.regex(/^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$/, 'expected an EKS cluster name')),
    region: awsRegion,
    endpoint: serverUrl(/^https$/),
    caData,
  }),
  z.strictObject({
    kind: z.literal('secret'),
    /** Secrets Manager id or ARN of a secret whose string is a kubeconfig. */
    secretId: z.string().check(z.minLength(1, 'expected a Secrets Manager secret id or ARN')),
    region: z.optional(awsRegion),
    context: kubeconfigContext,
  }),
]);
export type ClusterAccess = z.infer<typeof ClusterAccessSchema>;
export type ClusterAccessKind = ClusterAccess['kind'];

export const ClusterRegistrationSchema = z.strictObject({
  id: clusterId,
  access: ClusterAccessSchema,
  labels: z._default(z.record(z.string(), z.string()), {}),
  /**
   * The OpenYurt release the cluster runs, as its operator declares it: the API cannot tell v1.6.0 (whose
   * YurtHub has a yurt-coordinator client) from v1.6.1 (whose has none) (core/yurt-coordinator/hub-support.ts).
   */
  openYurtRelease: z.optional(
    z.string().check(z.regex(/^v\d{1,4}\.\d{1,4}\.\d{1,4}$/, 'expected a release like v1.5.1')),
  ),
});
export type ClusterRegistrationInput = z.input<typeof ClusterRegistrationSchema>;
export type ClusterRegistration = z.infer<typeof ClusterRegistrationSchema> & {
  createdAt?: string;
  updatedAt?: string;
  /** What the cluster was last found to serve of OpenYurt's NodePool (written by the audit). */
  openYurt?: OpenYurtObservation & { observedAt: string };
};

export class ClusterExistsError extends Error {
  constructor(id: string) {
    super(`cluster ${id} is already registered`);
    this.name = 'ClusterExistsError';
  }
}

/** Validates input; the error lists each bad field as `path: message`. */
export function parseClusterRegistration(input: unknown): z.infer<typeof ClusterRegistrationSchema> {
  const res = ClusterRegistrationSchema.safeParse(input);
  if (!res.success) {
    const detail = res.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new TypeError(`invalid cluster registration: ${detail}`);
  }
  return res.data;
}

/** Creates or replaces a registration (createdAt is kept on replace). `createOnly` refuses an existing id. */
export async function registerCluster(
  table: StateTable,
  input: ClusterRegistrationInput,
  now: Date,
  options: { createOnly?: boolean } = {},
): Promise<ClusterRegistration> {
  const reg = parseClusterRegistration(input);
  const parts = setAttributes({
    id: reg.id,
    access: reg.access,
    labels: reg.labels,
    // A registration replaced without a release no longer declares one.
    openYurtRelease: reg.openYurtRelease ?? null,
    updatedAt: now.toISOString(),
  });
  parts.names['#createdAt'] = 'createdAt';
  parts.values[':createdAt'] = now.toISOString();
  parts.set.push('#createdAt = if_not_exists(#createdAt, :createdAt)');
  if (options.createOnly) parts.conditions.push('attribute_not_exists(pk)');
  try {
    const out = await updateItem(table, { Key: keys.cluster(reg.id), ...renderUpdate(parts), ReturnValues: 'ALL_NEW' });
    if (!out.Attributes) throw new Error(`registering cluster ${reg.id}: the update returned no attributes`);
    return registrationFromItem(out.Attributes);
  } catch (err) {
    if (isConditionFailed(err)) throw new ClusterExistsError(reg.id);
    throw err;
  }
}

export function registrationFromItem(item: Record<string, unknown>): ClusterRegistration {
  return {
    id: String(item.id),
    access: item.access as ClusterAccess,
    labels: (item.labels as Record<string, string>) ?? {},
    createdAt: item.createdAt as string | undefined,
    updatedAt: item.updatedAt as string | undefined,
    ...(typeof item.openYurtRelease === 'string' ? { openYurtRelease: item.openYurtRelease } : {}),
    ...(item.openYurt ? { openYurt: item.openYurt as ClusterRegistration['openYurt'] } : {}),
  };
}

/**
 * Records what the cluster serves of OpenYurt's NodePool on its registration. Only an existing registration
 * is written (a cluster deregistered meanwhile stays gone); the audit writes it only when it changed.
 */
export async function recordOpenYurt(
  table: StateTable,
  id: string,
  observed: OpenYurtObservation,
  now: Date,
): Promise<boolean> {
  const parts = setAttributes({ openYurt: { ...observed, observedAt: now.toISOString() } });
  parts.conditions.push('attribute_exists(pk)');
  try {
    await updateItem(table, { Key: keys.cluster(id), ...renderUpdate(parts) });
    return true;
  } catch (err) {
    if (isConditionFailed(err)) return false;
    throw err;
  }
}

export async function getCluster(table: StateTable, id: string): Promise<ClusterRegistration | undefined> {
  const item = await getItem(table, keys.cluster(id));
  return item ? registrationFromItem(item) : undefined;
}

/** All registered clusters, optionally only those whose labels include every given label. */
export async function listClusters(
  table: StateTable,
  selector: Record<string, string> = {},
): Promise<ClusterRegistration[]> {
  const items = await queryAll(table, {
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': REGISTRY_PK, ':prefix': CLUSTER_PREFIX },
  });
  return items.map(registrationFromItem).filter((c) => Object.entries(selector).every(([k, v]) => c.labels[k] === v));
}

/** Removes a registration; returns whether it existed. */
export async function deregisterCluster(table: StateTable, id: string): Promise<boolean> {
  const out = await deleteItem(table, { Key: keys.cluster(id), ReturnValues: 'ALL_OLD' });
  return out.Attributes !== undefined;
}
