import { describe, expect, it } from 'vitest';
import {
  crdVersionSchema,
  type OpenApiResource,
  openApiV3Document,
  openApiV3Index,
} from '../../../../../dev/local/kube-api/schema/index.ts';

type Json = Record<string, any>;

const deployments: OpenApiResource = {
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  resource: 'deployments',
  namespaced: true,
  subresources: { status: true, scale: true },
};
const nodes: OpenApiResource = {
  group: '',
  version: 'v1',
  kind: 'Node',
  resource: 'nodes',
  namespaced: false,
  subresources: ['status'],
};
const pods: OpenApiResource = {
  group: '',
  version: 'v1',
  kind: 'Pod',
  resource: 'pods',
  namespaced: true,
  subresources: ['status'],
};
const widgetCrd = {
  spec: {
    versions: [
      {
        name: 'v1',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
          },
        },
      },
    ],
  },
};
const widgets: OpenApiResource = {
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  resource: 'widgets',
  namespaced: true,
  custom: true,
  subresources: { status: true },
  schema: () => crdVersionSchema(widgetCrd, 'v1'),
};

/** kubectl's QueryParamVerifierV3: the PATCH operation tagged with the kind must list the parameter. */
function patchSupports(doc: Json, gvk: { group: string; version: string; kind: string }, param: string): boolean {
  for (const item of Object.values<Json>(doc.paths)) {
    const op = item.patch;
    const tag = op?.['x-kubernetes-group-version-kind'];
    if (!op || tag.group !== gvk.group || tag.version !== gvk.version || tag.kind !== gvk.kind) continue;
    return op.parameters.some((p: Json) => p.name === param && p.in === 'query');
  }
  return false;
}

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node))
    node.forEach((n) => {
      refs(n, out);
    });
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

describe('OpenAPI v3 documents', () => {
  const apps = openApiV3Document('apps/v1', [deployments]) as Json;
  const core = openApiV3Document('v1', [pods, nodes]) as Json;
  const custom = openApiV3Document('example.com/v1', [widgets]) as Json;

  it('list fieldValidation on every PATCH, so kubectl validates on the server', () => {
    expect(patchSupports(apps, { group: 'apps', version: 'v1', kind: 'Deployment' }, 'fieldValidation')).toBe(true);
    expect(patchSupports(core, { group: '', version: 'v1', kind: 'Node' }, 'fieldValidation')).toBe(true);
    expect(patchSupports(custom, { group: 'example.com', version: 'v1', kind: 'Widget' }, 'fieldValidation')).toBe(
      true,
    );
    for (const doc of [apps, core, custom]) {
      for (const item of Object.values<Json>(doc.paths)) {
        if (item.patch)
          expect(item.patch.parameters.map((p: Json) => p.name)).toEqual(
            expect.arrayContaining(['fieldValidation', 'fieldManager', 'dryRun', 'force']),
          );
        for (const verb of ['post', 'put'])
          if (item[verb]) expect(item[verb].parameters.map((p: Json) => p.name)).toContain('fieldValidation');
      }
    }
  });

  it('tag every operation with its action and group-version-kind', () => {
    const item = apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
    expect(item.patch['x-kubernetes-action']).toBe('patch');
    expect(item.patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', kind: 'Deployment', version: 'v1' });
    expect(item.patch.operationId).toBe('patchAppsV1NamespacedDeployment');
    expect(apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].get['x-kubernetes-action']).toBe('list');
    expect(apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].delete.operationId).toBe(
      'deleteAppsV1CollectionNamespacedDeployment',
    );
    expect(apps.paths['/apis/apps/v1/deployments'].get.operationId).toBe('listAppsV1DeploymentForAllNamespaces');
    expect(
      apps.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'].patch[
        'x-kubernetes-group-version-kind'
      ],
    ).toEqual({ group: 'autoscaling', kind: 'Scale', version: 'v1' });
    expect(Object.keys(core.paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/nodes',
        '/api/v1/nodes/{name}',
        '/api/v1/nodes/{name}/status',
        '/api/v1/namespaces/{namespace}/pods/{name}',
      ]),
    );
    expect(core.paths['/api/v1/nodes/{name}'].parameters.map((p: Json) => p.name)).toEqual(['name', 'pretty']);
  });

  it('offer strategic merge patch for built-in kinds only', () => {
    const patchTypes = (doc: Json, path: string) => Object.keys(doc.paths[path].patch.requestBody.content);
    expect(patchTypes(apps, '/apis/apps/v1/namespaces/{namespace}/deployments/{name}')).toContain(
      'application/strategic-merge-patch+json',
    );
    expect(patchTypes(custom, '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}')).not.toContain(
      'application/strategic-merge-patch+json',
    );
    expect(patchTypes(custom, '/apis/example.com/v1/namespaces/{namespace}/widgets/{name}')).toContain(
      'application/merge-patch+json',
    );
  });

  it('publish kind schemas under kube definition names, tagged with their group-version-kind', () => {
    const deployment = apps.components.schemas['io.k8s.api.apps.v1.Deployment'];
    expect(deployment['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    expect(deployment.properties.metadata.allOf).toEqual([
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    ]);
    expect(apps.components.schemas['io.k8s.api.apps.v1.DeploymentList']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', kind: 'DeploymentList', version: 'v1' },
    ]);
    const containers = apps.components.schemas['io.k8s.api.core.v1.PodSpec'].properties.containers;
    expect(containers).toMatchObject({
      items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' },
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });

    const widget = custom.components.schemas['com.example.v1.Widget'];
    expect(widget['x-kubernetes-group-version-kind']).toEqual([
      { group: 'example.com', kind: 'Widget', version: 'v1' },
    ]);
    expect(widget.properties.spec.properties.size).toEqual({ type: 'integer' });
    expect(widget.properties.metadata.allOf[0].$ref).toBe(
      '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
  });

  it('resolve every $ref inside the document, including the recursive JSONSchemaProps', () => {
    const crds = openApiV3Document('apiextensions.k8s.io/v1', [
      {
        group: 'apiextensions.k8s.io',
        version: 'v1',
        kind: 'CustomResourceDefinition',
        resource: 'customresourcedefinitions',
        namespaced: false,
        subresources: ['status'],
      },
    ]) as Json;
    for (const doc of [apps, core, custom, crds]) {
      const missing = refs(doc).filter((r) => !(r.replace('#/components/schemas/', '') in doc.components.schemas));
      expect(missing).toEqual([]);
    }
    const props =
      crds.components.schemas['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps'].properties;
    expect(props.properties.additionalProperties).toEqual({
      $ref: '#/components/schemas/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
    });
  });

  it('reject resources of another group-version', () => {
    expect(() => openApiV3Document('v1', [deployments])).toThrow(/apps\/v1/);
  });
});

describe('OpenAPI v3 index', () => {
  it('lists each group-version with a hashed server-relative URL', () => {
    const index = openApiV3Index(['v1', 'apps/v1', { group: 'example.com', version: 'v1' }]) as Json;
    expect(Object.keys(index.paths)).toEqual(['api/v1', 'apis/apps/v1', 'apis/example.com/v1']);
    expect(index.paths['apis/apps/v1'].serverRelativeURL).toMatch(
      /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/,
    );
  });

  it('changes a hash when its document changes', () => {
    const doc = (size: string) => ({ openapi: '3.0.0', components: { schemas: { size } } });
    const a = openApiV3Index(['example.com/v1', 'v1'], { 'example.com/v1': doc('integer') }) as Json;
    const b = openApiV3Index(['example.com/v1', 'v1'], { 'example.com/v1': doc('string') }) as Json;
    expect(a.paths['apis/example.com/v1'].serverRelativeURL).not.toBe(b.paths['apis/example.com/v1'].serverRelativeURL);
    expect(a.paths['api/v1'].serverRelativeURL).toBe(b.paths['api/v1'].serverRelativeURL);
  });
});
