/** DELETE and DELETE-collection with DeleteOptions from the body and/or the query. */
import { bodyFormat, parseText, readBody } from '../body.ts';
import { ApiError, badRequest } from '../errors.ts';
import { type ApiObject, isPlainObject, type JsonObject } from '../objects.ts';
import { negotiate, sendJson } from '../respond.ts';
import type { DeleteOptions, Propagation } from '../store.ts';
import { listPrefixFor, readPage } from './list.ts';
import { renderList, renderObject } from './render.ts';
import { isDryRun, type Scope } from './scope.ts';
import { selectionFilter } from './selection.ts';

const POLICIES = ['Background', 'Foreground', 'Orphan'];

async function deleteOptions(s: Scope): Promise<DeleteOptions> {
  const raw = await readBody(s.req);
  let body: JsonObject = {};
  if (raw.length) {
    let parsed: unknown;
    try {
      // JSON, YAML or (client-go's typed Delete) protobuf DeleteOptions.
      parsed = parseText(raw, bodyFormat(s.req.headers['content-type']));
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw badRequest(`error decoding DeleteOptions: ${(err as Error).message}`);
    }
    if (!isPlainObject(parsed)) throw badRequest('error decoding DeleteOptions: the body must be a JSON object');
    body = parsed;
  }
  const q = s.query;
  // As sent: a value that is not one of POLICIES (a string or not) is refused below.
  let policy = (body.propagationPolicy as string | undefined) ?? q.get('propagationPolicy') ?? undefined;
  const orphan =
    body.orphanDependents ?? (q.has('orphanDependents') ? q.get('orphanDependents') === 'true' : undefined);
  if (policy !== undefined && orphan !== undefined) {
    throw new ApiError(
      422,
      'Invalid',
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "' +
        policy +
        '": orphanDependents and deletionPropagation cannot be both set',
      {
        group: 'meta.k8s.io',
        kind: 'DeleteOptions',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: `Invalid value: "${policy}": orphanDependents and deletionPropagation cannot be both set`,
            field: 'propagationPolicy',
          },
        ],
      },
    );
  }
  if (policy === undefined && orphan !== undefined) policy = orphan ? 'Orphan' : 'Background';
  if (policy !== undefined && !POLICIES.includes(policy)) {
    throw new ApiError(
      422,
      'Invalid',
      `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      {
        group: 'meta.k8s.io',
        kind: 'DeleteOptions',
        causes: [
          {
            reason: 'FieldValueNotSupported',
            message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
            field: 'propagationPolicy',
          },
        ],
      },
    );
  }
  const dryRunBody: unknown[] = Array.isArray(body.dryRun) ? body.dryRun : [];
  for (const v of dryRunBody)
    if (v !== 'All') throw badRequest(`Invalid dry run value: ${JSON.stringify(v)}. Supported values: "All"`);
  const dryRun = isDryRun(q) || dryRunBody.length > 0;
  s.record.dryRun = dryRun;
  return {
    dryRun,
    propagationPolicy: policy as Propagation | undefined,
    preconditions: isPlainObject(body.preconditions)
      ? (body.preconditions as DeleteOptions['preconditions'])
      : undefined,
  };
}

/** Most built-ins answer an immediate delete with a Success Status; pods and custom resources with the object. */
function returnsObject(s: Scope): boolean {
  return s.info.custom || (s.info.group === '' && s.info.resource === 'pods');
}

export async function handleDelete(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, false);
  const opts = await deleteOptions(s);
  const { obj, deleted } = await s.store.delete(s.info, s.route.namespace, s.route.name!, opts);
  if (deleted && !returnsObject(s)) {
    const details: JsonObject = { name: obj.metadata.name };
    if (s.info.group) details.group = s.info.group;
    details.kind = s.info.resource;
    details.uid = obj.metadata.uid;
    sendJson(s.res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details });
    return;
  }
  sendJson(s.res, 200, renderObject(s.info, form, obj));
}

export async function handleDeleteCollection(s: Scope): Promise<void> {
  const form = negotiate(s.req, s.query, false);
  const opts = await deleteOptions(s);
  const filter = selectionFilter(s.info, s.query);
  const page = await readPage(s.ctx, s.info, listPrefixFor(s.info, s.route.namespace), filter, 0, undefined, undefined);
  const out: ApiObject[] = [];
  for (const item of page.items) {
    try {
      const { obj } = await s.store.delete(s.info, item.metadata.namespace, item.metadata.name, opts);
      out.push(obj);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  sendJson(s.res, 200, renderList(s.info, form, out, String(page.revision)));
}
