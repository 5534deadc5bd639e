import { describe, expect, it } from 'vitest';
import { builtinDecodeError } from '../../../../../dev/local/kube-api/schema/index.ts';

const deployment = (spec: unknown, metadata: unknown = { name: 'web' }) =>
  builtinDecodeError('apps', 'v1', 'Deployment', { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec });

const prefix = 'Deployment in version "v1" cannot be handled as a Deployment: ';

describe('builtinDecodeError', () => {
  it('words a wrong JSON type like Go decoding into the built-in struct', () => {
    expect(deployment({ replicas: '3' })).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
    expect(deployment({ replicas: 1.5 })).toBe(
      `${prefix}json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32`,
    );
    expect(deployment('fast')).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field Deployment.spec of type v1.DeploymentSpec`,
    );
    expect(deployment({}, { name: 'web', labels: { tier: 1 } })).toBe(
      `${prefix}json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`,
    );
  });

  it('names the innermost struct and the JSON path without list indexes', () => {
    expect(
      deployment({
        template: { spec: { containers: [{ name: 'a' }, { name: 'b', ports: [{ containerPort: '80' }] }] } },
      }),
    ).toBe(
      `${prefix}json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32`,
    );
    expect(deployment({ template: { spec: { containers: { name: 'a' } } } })).toBe(
      `${prefix}json: cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container`,
    );
  });

  it('reports the first problem in document order', () => {
    expect(deployment({ paused: 'yes', replicas: 'x' })).toMatch(
      /Go struct field DeploymentSpec\.spec\.paused of type bool$/,
    );
  });

  it('accepts what Go decodes: nulls, int-or-string, quantities as numbers, unknown fields', () => {
    expect(
      deployment({
        replicas: null,
        strategy: { rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
        template: { spec: { containers: [{ name: 'a', resources: { limits: { cpu: 0.5 } } }] } },
        bogus: { any: 'thing' },
      }),
    ).toBeUndefined();
    expect(builtinDecodeError('example.com', 'v1', 'Widget', {})).toBeUndefined();
  });
});
