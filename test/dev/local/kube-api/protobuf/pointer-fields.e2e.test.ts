import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { requireKubeBinary } from '../../../../../dev/local/kube-bins/index.ts';

const committed = JSON.parse(
  readFileSync(new URL('../../../../../dev/local/kube-api/protobuf/pointer-fields.json', import.meta.url), 'utf8'),
) as { fields: string[] };

describe('pointer-fields.json', () => {
  it('lists Go pointer scalars (zero is meaningful) and not plain fields (zero means unset)', () => {
    const fields = new Set(committed.fields);
    for (const f of [
      'core.v1.KeyToPath.mode',
      'core.v1.SecurityContext.runAsUser',
      'apps.v1.DeploymentSpec.replicas',
      'coordination.v1.LeaseSpec.leaseTransitions',
    ]) {
      expect(fields.has(`k8s.io.api.${f}`), f).toBe(true);
    }
    expect(fields.has('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions.gracePeriodSeconds')).toBe(true);
    for (const f of [
      'core.v1.Container.stdin',
      'core.v1.ContainerPort.containerPort',
      'apps.v1.DeploymentStatus.replicas',
      'core.v1.ConfigMap.DataEntry.value',
    ]) {
      expect(fields.has(`k8s.io.api.${f}`), f).toBe(false);
    }
  });

  it('matches the Go types of the pinned release (regenerate with the pointer-fields binary of npm run kube-bins if not)', () => {
    const generated = JSON.parse(execFileSync(requireKubeBinary('pointer-fields'), { encoding: 'utf8' })) as {
      fields: string[];
    };
    expect(generated.fields.length).toBeGreaterThan(100);
    expect(generated.fields).toEqual(committed.fields);
  });
});
