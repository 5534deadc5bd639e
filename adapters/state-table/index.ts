export * from './keys.ts';
export * from './table.ts';
export * from './lease.ts';
export * from './reconcile-state.ts';
export * from './registry.ts';
export * from './event-dedupe.ts';
export { sanitizeErrorMessage, MAX_ERROR_LENGTH } from './sanitize.ts';
export { renderUpdate, setAttributes, mergeParts, emptyParts } from './expression.ts';
export type { UpdateParts } from './expression.ts';
