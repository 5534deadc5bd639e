/**
 * The strict renderer of OpenYurt's yurt-manager chart (dev/local/openyurt/chart.ts): what it substitutes,
 * what it drops, and that anything else is an error naming the file and line, never a silent pass-through.
 */
import { describe, expect, it } from 'vitest';
import { ChartTemplateError, renderTemplate, renderYurtManagerChart } from '../../../../dev/local/openyurt/chart.ts';

const ctx = {
  namespace: 'kube-system',
  values: { ports: { webhook: 10273, metrics: 10271 }, image: { pullSecrets: [] }, name: 'x' },
  skipKinds: new Set(['Deployment']),
};

function renderError(text: string): ChartTemplateError {
  try {
    renderTemplate('t.yaml', text, ctx);
  } catch (err) {
    if (err instanceof ChartTemplateError) return err;
    throw err;
  }
  throw new Error('rendered without an error');
}

describe('yurt-manager chart renderer', () => {
  it('substitutes .Release.Namespace and scalar .Values, drops the labels includes and the keys they leave empty', () => {
    const text = [
      '# a comment',
      '---',
      'apiVersion: v1',
      'kind: Service',
      'metadata:',
      '  name: svc',
      '  namespace: {{ .Release.Namespace }}',
      '  labels:',
      '    {{- include "yurt-manager.labels" . | nindent 4 }}',
      'spec:',
      '  ports:',
      '    - port: 443',
      '      targetPort: {{ .Values.ports.webhook }}',
      '  selector:',
      '    {{- include "yurt-manager.selectorLabels" . | nindent 4 }}',
      '---',
    ].join('\n');
    expect(renderTemplate('t.yaml', text, ctx)).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'svc', namespace: 'kube-system' },
        spec: { ports: [{ port: 443, targetPort: 10273 }] },
      },
    ]);
  });

  it('drops a skipped kind unrendered, whatever constructs it holds', () => {
    const text = [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata:',
      '  name: yurt-manager',
      'spec:',
      '  replicas: {{ .Values.replicaCount }}',
      '      {{- if not (empty .Values.image.pullSecrets) }}',
      '{{ toYaml .Values.image.pullSecrets | indent 8 }}',
      '      {{- end }}',
      '---',
      'apiVersion: v1',
      'kind: ServiceAccount',
      'metadata:',
      '  name: sa',
    ].join('\n');
    expect(renderTemplate('t.yaml', text, ctx).map((o) => o.kind)).toEqual(['ServiceAccount']);
  });

  it.each([
    ['a conditional', '  {{- if .Values.name }}', '{{- if .Values.name }}'],
    ['a function', '  x: {{ toYaml .Values.image.pullSecrets }}', '{{ toYaml .Values.image.pullSecrets }}'],
    ['an include not on a line of its own', '  a: {{- include "yurt-manager.labels" . | nindent 4 }}', '{{- include'],
    ['another include', '    {{- include "yurt-manager.chart" . | nindent 4 }}', 'yurt-manager.chart'],
    ['an unterminated action', '  a: {{ .Release.Name', '{{ .Release.Name'],
    ['a stray closing', '  a: b }}', '}}'],
  ])('throws on %s, naming the file and line', (_, line, quoted) => {
    const err = renderError(['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: cm', line].join('\n'));
    expect(err.message).toMatch(/^t\.yaml:5: template construct /);
    expect(err.message).toContain(quoted);
  });

  it('throws on a value that is missing or not a scalar', () => {
    const doc = (ref: string) => ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', `  name: {{ ${ref} }}`].join('\n');
    expect(renderError(doc('.Values.ports.healthProbe')).message).toBe(
      't.yaml:4: .Values.ports.healthProbe is not set in values.yaml or the overrides',
    );
    expect(renderError(doc('.Values.ports')).message).toContain('.Values.ports is not a scalar');
  });

  it('throws on a document that is not a Kubernetes object', () => {
    expect(renderError('kind: ConfigMap\nmetadata: {}').message).toContain('not a Kubernetes object');
    expect(renderError('apiVersion: v1\nkind: [').message).toContain('does not parse');
  });

  // One ServiceAccount, ClusterRole and binding per controller, and the base ones. v1.7.0 drops yurtcoordinatorcert,
  // delegatelease, yurtappdaemon and yurtappoverrider, adds hubleader, hubleaderconfig, hubleaderrbac, imagepreheat
  // and yurtnodeconversion, and one ClusterRole more (yurt-hub-multiplexer).
  it.each([
    ['v1.5.1', 21, 22],
    ['v1.7.0', 22, 24],
  ] as const)(
    "renders OpenYurt %s's own chart: RBAC, ServiceAccounts, webhook configurations, Secret and Service; no Deployment",
    async (release, serviceAccounts, clusterRoles) => {
      const objects = await renderYurtManagerChart(release, { values: { ports: { webhook: 12345 } } });
      const count = (kind: string) => objects.filter((o) => o.kind === kind).length;
      expect(count('Deployment')).toBe(0);
      expect(count('ServiceAccount')).toBe(serviceAccounts);
      expect(count('ClusterRole')).toBe(clusterRoles);
      expect(count('ClusterRoleBinding')).toBe(clusterRoles);
      expect(count('MutatingWebhookConfiguration')).toBe(1);
      expect(count('ValidatingWebhookConfiguration')).toBe(1);
      for (const o of objects) {
        if (o.kind === 'ServiceAccount' || o.kind === 'Secret' || o.kind === 'Service' || o.kind === 'Role') {
          expect(o.metadata?.namespace).toBe('kube-system');
        }
      }
      const service = objects.find((o) => o.kind === 'Service') as {
        spec?: { ports?: Array<{ targetPort?: number }> };
      };
      expect(service.spec?.ports?.[0]?.targetPort).toBe(12345);
      const strings: string[] = [];
      JSON.stringify(objects, (_, v: unknown) => {
        if (typeof v === 'string') strings.push(v);
        return v;
      });
      expect(strings.filter((s) => /\{\{|\}\}/.test(s))).toEqual([]);
    },
  );
});
