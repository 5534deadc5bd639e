import { defineKubectlSuite } from './suite.ts';

defineKubectlSuite('memory');
