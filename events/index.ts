export * from './source.ts';
export * from './change-notice.ts';
export * from './reconcile-request.ts';
export * from './envelope.ts';
