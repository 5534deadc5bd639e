/**
 * etcd's auth API as the agent uses it, over the agent's etcd client (its certificate's CN is a root user
 * once auth is on, and before that every client may do anything).
 */
import type { Etcd3 } from 'etcd3';
import type { EtcdAuthOp, EtcdAuthSpec, EtcdAuthState } from '../decide/etcd-auth.ts';

export interface EtcdAuthAccess {
  /** What etcd holds of the users and the role `spec` names. */
  read(spec: EtcdAuthSpec): Promise<EtcdAuthState>;
  apply(op: EtcdAuthOp): Promise<void>;
}

const CALL_DEADLINE_MS = 10_000;
const bin = (s: string) => Buffer.from(s, 'latin1');

export function createEtcdAuthAccess(client: Etcd3): EtcdAuthAccess {
  const auth = client.auth;
  const deadline = () => ({ deadline: Date.now() + CALL_DEADLINE_MS });
  return {
    async read(spec) {
      const { enabled } = await auth.authStatus(deadline());
      const existing = new Set((await auth.userList(deadline())).users);
      const users: Record<string, string[]> = {};
      for (const name of new Set(['root', ...spec.rootUsers, spec.limitedUser])) {
        if (existing.has(name)) users[name] = (await auth.userGet({ name }, deadline())).roles;
      }
      const roles = new Set((await auth.roleList(deadline())).roles);
      const limitedRole = roles.has(spec.limitedUser)
        ? (await auth.roleGet({ role: spec.limitedUser }, deadline())).perm.map((p) => ({
            key: Buffer.from(p.key).toString('latin1'),
            rangeEnd: Buffer.from(p.range_end).toString('latin1'),
            permType: String(p.permType),
          }))
        : undefined;
      return { enabled, users, limitedRole };
    },
    async apply(op) {
      switch (op.op) {
        case 'roleAdd':
          await auth.roleAdd({ name: op.role }, deadline());
          return;
        case 'grantPermission':
          await auth.roleGrantPermission(
            {
              name: op.role,
              perm: { permType: 'Readwrite', key: bin(op.range.key), range_end: bin(op.range.rangeEnd) },
            },
            deadline(),
          );
          return;
        case 'revokePermission':
          await auth.roleRevokePermission(
            { role: op.role, key: bin(op.range.key), range_end: bin(op.range.rangeEnd) },
            deadline(),
          );
          return;
        case 'userAdd':
          // No password: the user can only be a client certificate's CN, never a name/password login.
          await auth.userAdd({ name: op.user, options: { no_password: true } }, deadline());
          return;
        case 'grantRole':
          await auth.userGrantRole({ user: op.user, role: op.role }, deadline());
          return;
        case 'revokeRole':
          await auth.userRevokeRole({ name: op.user, role: op.role }, deadline());
          return;
        case 'authEnable':
          await auth.authEnable(deadline());
          return;
      }
    },
  };
}
