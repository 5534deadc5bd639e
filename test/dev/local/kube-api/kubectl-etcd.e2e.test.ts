import { defineKubectlSuite } from './kubectl-suite.ts';

// A real etcd (the pinned 3.6 build) under /dev/shm, with kube-apiserver's key layout.
defineKubectlSuite('etcd');
