export * from './contract.ts';
export * from './compat.ts';
export * from './identity.ts';
export * from './pki.ts';
export * from './pool.ts';
export * from './etcd-auth.ts';
export * from './etcd-proxy.ts';
export * from './cluster-objects.ts';
