import { defineKubectlSuite } from './kubectl-suite.ts';

defineKubectlSuite('memory');
