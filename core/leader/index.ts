/** YurtHub leader election (client-go Lease semantics) and the probe's classification of it; pure. */
export * from './election.ts';
export * from './classify.ts';
