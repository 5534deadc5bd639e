import { useDynalite } from './backends.ts';
import { rolloutStateSuite } from './rollout-state.suite.ts';

/** On dynalite; moto.e2e.test.ts runs the same suite on moto. */
rolloutStateSuite(useDynalite());
