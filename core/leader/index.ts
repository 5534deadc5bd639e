/** YurtHub leader election (client-go Lease semantics) and the probe's classification of it; pure. */

export * from './classify.ts';
export * from './election.ts';
export * from './probe-record.ts';
