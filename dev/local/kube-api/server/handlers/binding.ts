/**
 * pods/binding, as kube-apiserver's BindingREST serves it (pkg/registry/core/pod/storage): what
 * kube-scheduler calls to place a pod. It sets spec.nodeName once, merges the Binding's annotations and
 * labels into the pod's, and marks PodScheduled True, straight on storage: no validation of the pod and no
 * managedFields entry. Answers a Status Success (201). Each answer here was measured against
 * kube-apiserver v1.36.3 (test/dev/local/kube-api/pod-binding.e2e.test.ts).
 */
import { decodeObject, readBody } from '../body.ts';
import { badRequest, unknownError } from '../errors.ts';
import { isPlainObject, type JsonObject } from '../objects.ts';
import { sendJson } from '../respond.ts';
import type { Scope } from './scope.ts';

const BINDING = { kind: 'Binding', group: '', version: 'v1', custom: false } as const;
const REFUSED_AS = { group: '', resource: 'pods/binding' };

type Strings = Record<string, string>;
const strings = (v: unknown): Strings => (isPlainObject(v) ? (v as Strings) : {});
/** As Go writes a map the storage decoded and encoded again: keys in order. */
const sorted = (m: Strings): Strings => Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)));

/** ValidatePodBinding; kube returns these without an API status, so they reach the client as a 500. */
function bindingProblems(target: JsonObject): string[] {
  const problems: string[] = [];
  const kind = typeof target.kind === 'string' ? target.kind : '';
  if (kind !== '' && kind !== 'Node')
    problems.push(`target.kind: Unsupported value: ${JSON.stringify(kind)}: supported values: "Node", "<empty>"`);
  if (typeof target.name !== 'string' || target.name === '') problems.push('target.name: Required value');
  return problems;
}

export async function handleBinding(s: Scope): Promise<void> {
  const name = s.route.name!;
  const binding = decodeObject(await readBody(s.req), s.req.headers['content-type'], BINDING);
  const meta = strings(binding.metadata);
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== s.route.namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  if (meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const target = isPlainObject(binding.target) ? binding.target : {};
  const problems = bindingProblems(target);
  const [onlyProblem] = problems;
  if (problems.length)
    throw unknownError(problems.length === 1 && onlyProblem !== undefined ? onlyProblem : `[${problems.join(', ')}]`);
  const annotations = strings(binding.metadata?.annotations);
  const labels = strings(binding.metadata?.labels);
  const now = s.store.now();

  await s.store.guaranteedUpdate(
    s.info,
    s.route.namespace,
    name,
    { uid: meta.uid, resourceVersion: meta.resourceVersion },
    REFUSED_AS,
    (pod) => {
      pod.spec ??= {};
      const spec = pod.spec as JsonObject;
      if (pod.metadata.deletionTimestamp) return `pod ${name} is being deleted, cannot be assigned to a host`;
      if (spec.nodeName) return `pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`;
      if (Array.isArray(spec.schedulingGates) && spec.schedulingGates.length)
        return `pod ${name} has non-empty .spec.schedulingGates`;
      spec.nodeName = target.name;
      pod.status ??= {};
      const status = pod.status as JsonObject;
      // ClearingNominatedNodeNameAfterBinding (beta, on by default since 1.35).
      delete status.nominatedNodeName;
      const merged = sorted({ ...strings(pod.metadata.annotations), ...annotations });
      // An empty map is left out of the JSON (omitempty), as kube stores it.
      if (Object.keys(merged).length) pod.metadata.annotations = merged;
      else delete pod.metadata.annotations;
      // PodTopologyLabelsAdmission (on by default): the Binding's labels overwrite the pod's.
      if (Object.keys(labels).length) pod.metadata.labels = sorted({ ...strings(pod.metadata.labels), ...labels });
      markScheduled(status, now);
      return undefined;
    },
  );
  sendJson(s.res, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, s.warnings);
}

/** podutil.UpdatePodCondition with PodScheduled True: reason and message cleared, the transition time kept if it was True. */
function markScheduled(status: JsonObject, now: string): void {
  if (!Array.isArray(status.conditions)) status.conditions = [];
  const conditions = status.conditions as Array<JsonObject | null | undefined>;
  const i = conditions.findIndex((c) => c?.type === 'PodScheduled');
  const old = i >= 0 ? conditions[i] : undefined;
  const condition = {
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : now,
  };
  if (i >= 0) conditions[i] = condition;
  else conditions.push(condition);
}
