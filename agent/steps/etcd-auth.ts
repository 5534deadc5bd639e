/**
 * etcd auth (yurt-coordinator-compatible pools): every pass reads the users, the bounded role and the auth
 * switch, and makes the calls the plan asks for, `auth enable` last. etcd's data is in memory, so after a
 * pool-spirit restart the first pass finds nothing and sets everything up again; after an agent restart it
 * finds auth on and only checks. The hub-facing etcd proxy serves nothing until etcd refuses its identity
 * (agent/etcd-proxy/), so the order here is what keeps a hub's certificate bounded from its first request.
 */
import type { EtcdAuthAccess } from '../adapters/etcd-auth.ts';
import { describeOp, type EtcdAuthSpec, planEtcdAuth } from '../decide/etcd-auth.ts';
import type { Logger } from '../log.ts';
import type { AgentStats } from '../stats.ts';

export interface EtcdAuthStepDeps {
  access: EtcdAuthAccess;
  spec: EtcdAuthSpec;
  stats: AgentStats;
  log: Logger;
  now: () => Date;
}

export class EtcdAuthStep {
  private readonly d: EtcdAuthStepDeps;

  constructor(deps: EtcdAuthStepDeps) {
    this.d = deps;
  }

  async run(): Promise<void> {
    const { access, spec, stats, log, now } = this.d;
    const plan = planEtcdAuth(spec, await access.read(spec));
    for (const op of plan) {
      const at = now().toISOString();
      if (op.op === 'authEnable') stats.etcdAuth.enableRequestedAt = at;
      await access.apply(op);
      stats.etcdAuth.calls++;
      if (op.op === 'authEnable') {
        stats.etcdAuth.enabledAt = now().toISOString();
        stats.etcdAuth.enables++;
        log.info('etcd auth enabled', {
          requestedAt: at,
          limitedUser: spec.limitedUser,
          prefixes: spec.prefixes.length,
          rootUsers: spec.rootUsers,
        });
      }
    }
    if (plan.length > 0) {
      if (plan.some((op) => op.op !== 'authEnable')) log.info('etcd auth converged', { calls: plan.map(describeOp) });
      // Read back: a pass that ends without error leaves etcd exactly as planned.
      const after = planEtcdAuth(spec, await access.read(spec));
      if (after.length > 0)
        throw new Error(`etcd auth still differs after converging: ${after.map(describeOp).join(', ')}`);
    }
    stats.etcdAuth.verifiedAt = now().toISOString();
  }
}
