import { useDynalite } from './backends.ts';
import { probeRecordsSuite } from './probe-records.suite.ts';

/** On dynalite; moto.e2e.test.ts runs the same suite on moto. */
probeRecordsSuite(useDynalite());
