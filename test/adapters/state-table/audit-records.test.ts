import { auditRecordsSuite } from './audit-records.suite.ts';
import { useDynalite } from './backends.ts';

/** On dynalite; moto.e2e.test.ts runs the same suite on moto. */
auditRecordsSuite(useDynalite());
