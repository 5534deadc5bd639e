/**
 * Validation run on every write: object name, schema (structural for CRs, generated for built-ins),
 * unknown fields per fieldValidation, and the CRD's own rules for CustomResourceDefinitions.
 */

import { qualifiedResource, type ResourceInfo } from '../registry.ts';
import type { StatusCause } from '../schema/types.ts';
import { badRequest, invalid } from './errors.ts';
import type { ApiObject } from './objects.ts';
import { type FieldValidation, namesModule, schemaModule } from './peers.ts';

export interface ValidationOutcome {
  /** The object with unknown fields pruned (CRs) or unchanged. */
  obj: ApiObject;
  warnings: string[];
}

/** metadata.name / generateName causes, by the resource's naming rule (`pods`, `deployments.apps`, `widgets.example.com`). */
export function validateName(info: ResourceInfo, meta: { name?: string; generateName?: string }): StatusCause[] {
  return namesModule.objectNameCauses(qualifiedResource(info), meta);
}

/**
 * Validates `obj` for a write. Strict unknown fields → 400 BadRequest, schema violations → 422 Invalid;
 * Warn collects `unknown field "x"` warnings for the Warning header.
 */
export function validateObject(
  info: ResourceInfo,
  obj: ApiObject,
  fieldValidation: FieldValidation,
  verb: 'create' | 'update' | 'patch' = 'create',
): ValidationOutcome {
  const name = String(obj.metadata?.name ?? '');
  const warnings: string[] = [];
  let result = obj;
  const schema = info.schema();
  const causes: StatusCause[] = [];
  if (schema) {
    const outcome = schemaModule.validateAgainstSchema(obj, schema, { fieldValidation });
    if (outcome.unknownFields.length) {
      if (fieldValidation === 'Strict') {
        // Create/update bodies fail in the decoder, which wraps the message; patches fail after patching.
        throw badRequest(
          schemaModule.strictDecodingError(
            info.kind,
            outcome.unknownFields,
            verb === 'patch' ? undefined : info.version,
          ),
        );
      }
      if (fieldValidation === 'Warn') warnings.push(...schemaModule.unknownFieldWarnings(outcome.unknownFields));
    }
    causes.push(...outcome.causes);
    // Like decoding into a typed object (built-ins) or pruning (CRs): unknown fields do not get stored.
    result = outcome.pruned as ApiObject;
  }
  if (info.group === 'apiextensions.k8s.io' && info.resource === 'customresourcedefinitions') {
    causes.push(...schemaModule.validateCrd(obj));
  }
  if (causes.length) throw invalid(info, name, dedupe(causes));
  return { obj: result, warnings };
}

function dedupe(causes: StatusCause[]): StatusCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => {
    const k = `${c.field}\u0000${c.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
