import { defineKubectlSuite } from './suite.ts';

// A real etcd (Debian etcd-server) under /dev/shm, with kube-apiserver's key layout.
defineKubectlSuite('etcd');
