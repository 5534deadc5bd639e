/**
 * etcd auth, decided: from what etcd holds (users, the bounded role, whether auth is on) to the calls that
 * make it what the pod's flags ask for. Pure, so every order of partial earlier runs (a crash between two
 * calls, an etcd restarted empty) converges on the same state by re-reading and re-planning.
 *
 * etcd names a TLS client by its certificate's CN once auth is on. `root` must exist with the root role
 * before etcd accepts `auth enable`; the users of kube-apiserver's and the agent's certificate get the root
 * role (they must keep working); the bounded user gets one role, named after it, holding readwrite on each
 * prefix and nothing else. Auth goes on last, after every user and permission exists, so no client that
 * must keep working is ever locked out.
 */

export interface EtcdAuthSpec {
  /** CNs that keep full access (the root role). */
  rootUsers: readonly string[];
  /** The CN whose requests are bounded to `prefixes`. Its role has the same name. */
  limitedUser: string;
  prefixes: readonly string[];
}

/** A key range as etcd stores a permission: [key, rangeEnd), both as binary strings. */
export interface KeyRange {
  key: string;
  rangeEnd: string;
}

export interface EtcdAuthState {
  enabled: boolean;
  /** Existing users by name, with their roles. */
  users: Record<string, readonly string[]>;
  /** The bounded role's permissions; absent when the role does not exist. */
  limitedRole?: ReadonlyArray<KeyRange & { permType: string }>;
}

export type EtcdAuthOp =
  | { op: 'roleAdd'; role: string }
  | { op: 'grantPermission'; role: string; range: KeyRange }
  | { op: 'revokePermission'; role: string; range: KeyRange }
  | { op: 'userAdd'; user: string }
  | { op: 'grantRole'; user: string; role: string }
  | { op: 'revokeRole'; user: string; role: string }
  | { op: 'authEnable' };

export const ROOT = 'root';
/** How etcd3 (the client library) spells the readwrite permission. */
export const READWRITE = 'Readwrite';

/** The range a prefix covers: the key up to the prefix with its last byte that can be incremented, incremented. */
export function prefixRange(prefix: string): KeyRange {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    const byte = bytes[i];
    if (byte !== undefined && byte < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i] = byte + 1;
      return { key: bytes.toString('latin1'), rangeEnd: end.toString('latin1') };
    }
  }
  // Only 0xff bytes: etcd reads "\0" as "to the end of the keyspace".
  return { key: bytes.toString('latin1'), rangeEnd: '\0' };
}

const sameRange = (a: KeyRange, b: KeyRange) => a.key === b.key && a.rangeEnd === b.rangeEnd;

/** The calls, in order, that bring `state` to `spec`; empty when it is there already. */
export function planEtcdAuth(spec: EtcdAuthSpec, state: EtcdAuthState): EtcdAuthOp[] {
  if (spec.rootUsers.includes(spec.limitedUser) || spec.limitedUser === ROOT)
    throw new Error(`the bounded etcd user ${spec.limitedUser} cannot also be a root user`);
  const ops: EtcdAuthOp[] = [];
  const role = spec.limitedUser;
  const wanted = spec.prefixes.map(prefixRange);
  const held = state.limitedRole;
  if (!held) ops.push({ op: 'roleAdd', role });
  for (const range of wanted) {
    const have = held?.find((p) => sameRange(p, range));
    if (have?.permType !== READWRITE) ops.push({ op: 'grantPermission', role, range });
  }
  for (const p of held ?? []) {
    if (!wanted.some((w) => sameRange(w, p)))
      ops.push({ op: 'revokePermission', role, range: { key: p.key, rangeEnd: p.rangeEnd } });
  }
  const ensureUser = (user: string, roleName: string) => {
    const roles = state.users[user];
    if (!roles) ops.push({ op: 'userAdd', user });
    if (!roles?.includes(roleName)) ops.push({ op: 'grantRole', user, role: roleName });
  };
  for (const user of [ROOT, ...spec.rootUsers]) ensureUser(user, ROOT);
  ensureUser(spec.limitedUser, role);
  // The bounded user holds its own role and nothing else, whoever granted it more.
  for (const other of state.users[spec.limitedUser] ?? []) {
    if (other !== role) ops.push({ op: 'revokeRole', user: spec.limitedUser, role: other });
  }
  if (!state.enabled) ops.push({ op: 'authEnable' });
  return ops;
}

/** A short, key-free description of an op for the logs. */
export function describeOp(op: EtcdAuthOp): string {
  switch (op.op) {
    case 'grantPermission':
    case 'revokePermission':
      return `${op.op} ${op.role} ${JSON.stringify(op.range.key)}`;
    case 'grantRole':
    case 'revokeRole':
      return `${op.op} ${op.role} → ${op.user}`;
    case 'roleAdd':
      return `roleAdd ${op.role}`;
    case 'userAdd':
      return `userAdd ${op.user}`;
    case 'authEnable':
      return 'authEnable';
  }
}
