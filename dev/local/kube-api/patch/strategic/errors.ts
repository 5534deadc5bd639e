/** apimachinery's mergepatch errors, with the HTTP status kube-apiserver gives each of them. */
import { goSprint, goTypeName } from '../json-value.ts';
import { PatchError, PatchInternalError } from '../types.ts';

// interpretStrategicMergePatchError: these are 400 BadRequest ...
export const badRetainKeys = () => new PatchError('invalid patch format of retainKeys', 400);
export const badPrimitiveList = () => new PatchError('invalid patch format of primitive list', 400);
export const badSetElementOrder = () => new PatchError('invalid patch format of setElementOrder list', 400);
// ... this one 422, whose Status message kube replaces with its generic one ...
export function noListOfLists(): PatchError {
  const err = new PatchError('the server rejected our request due to an error in our request', 422);
  err.cause = new Error('lists of lists are not supported');
  return err;
}

// ... and everything else is a bare Go error: 500 with the text as is.
export const noMergeKey = (item: unknown, key: string) =>
  new PatchInternalError(`map: ${goSprint(item)} does not contain declared merge key: ${key}`);
export const badArgType = (expected: 'map' | 'slice', actual: unknown) =>
  new PatchInternalError(
    `expected a ${expected === 'map' ? 'map[string]interface {}' : '[]interface {}'}, but received a ${goTypeName(actual)}`,
  );
export const badPatchType = (directive: unknown, patch: unknown) =>
  new PatchInternalError(`unknown patch type: ${goSprint(directive)} in map: ${goSprint(patch)}`);
export const internal = (message: string) => new PatchInternalError(message);
