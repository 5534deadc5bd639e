/**
 * metadata.name rules per resource, as kube-apiserver's validation applies them: most kinds take a
 * DNS-1123 subdomain, namespaces a DNS-1123 label, services a DNS-1035 label (kube is stricter there than
 * for namespaces: the first character must be a letter), RBAC kinds only path-segment rules.
 */
import type { StatusCause } from '../schema/types.ts';
import { isDns1035Label, isDns1123Label, isDns1123Subdomain, isValidPathSegmentName } from './messages.ts';

type NameRule = (name: string) => string[];

const rulesByResource: Record<string, NameRule> = {
  namespaces: isDns1123Label,
  services: isDns1035Label,
  roles: isValidPathSegmentName,
  rolebindings: isValidPathSegmentName,
  clusterroles: isValidPathSegmentName,
  clusterrolebindings: isValidPathSegmentName,
};

/** `roles`, `roles.rbac.authorization.k8s.io` → `roles`. */
function plural(resource: string): string {
  const dot = resource.indexOf('.');
  return dot < 0 ? resource : resource.slice(0, dot);
}

function isBuiltinQualified(resource: string): boolean {
  const dot = resource.indexOf('.');
  if (dot < 0) return true;
  return ['rbac.authorization.k8s.io', 'apps', 'coordination.k8s.io', 'apiextensions.k8s.io'].includes(
    resource.slice(dot + 1),
  );
}

export function nameRuleFor(resource: string): NameRule {
  return (isBuiltinQualified(resource) && rulesByResource[plural(resource)]) || isDns1123Subdomain;
}

/**
 * The problems kube reports for `name` as metadata.name of `resource` (plural, optionally `plural.group`;
 * unknown resources are custom resources, which take a DNS-1123 subdomain). Empty list = valid.
 * With `prefix` the name is a generateName prefix: a trailing `-` is allowed, as in kube.
 */
export function validateObjectName(resource: string, name: string, prefix = false): string[] {
  if (name === '') return ['name or generateName is required'];
  // kube's maskTrailingDash: "web-" is checked as "wea" so a prefix may end in a dash.
  const checked = prefix && name.endsWith('-') && name.length > 1 ? `${name.slice(0, -2)}a` : name;
  return nameRuleFor(resource)(checked);
}

/** The same, as the `Status.details.causes` kube-apiserver returns for a 422 Invalid. */
export function objectNameCauses(resource: string, meta: { name?: string; generateName?: string }): StatusCause[] {
  const causes: StatusCause[] = [];
  if (meta.generateName) {
    for (const msg of validateObjectName(resource, meta.generateName, true)) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(meta.generateName)}: ${msg}`,
        field: 'metadata.generateName',
      });
    }
  }
  if (!meta.name) {
    if (!meta.generateName)
      causes.push({
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      });
    return causes;
  }
  for (const msg of validateObjectName(resource, meta.name)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(meta.name)}: ${msg}`,
      field: 'metadata.name',
    });
  }
  return causes;
}
