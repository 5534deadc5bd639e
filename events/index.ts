export * from './audit-request.ts';
export * from './change-notice.ts';
export * from './ec2.ts';
export * from './envelope.ts';
export * from './leader-probe-request.ts';
export * from './reconcile-request.ts';
export * from './rollout.ts';
export * from './source.ts';
