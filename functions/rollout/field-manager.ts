/** The field manager of the rollout's applies: a module of its own so naming it does not load the apiserver client. */
export const ROLLOUT_FIELD_MANAGER = 'pool-spirit-rollout';
