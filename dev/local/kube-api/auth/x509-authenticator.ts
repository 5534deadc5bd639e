/**
 * Client-certificate authentication, as kube-apiserver's x509 authenticator: Node's TLS layer verifies the
 * chain against the client CAs (the server asks for a certificate but does not abort the handshake without
 * one, so the client gets a kube 401 Status rather than a TLS alert); here the verified leaf becomes the
 * user: name = subject CN, groups = subject O values. A certificate whose extended key usages exclude
 * clientAuth, or with an empty CN, authenticates nobody, as in kube.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import * as x509 from '../../../../shared/x509.ts';
import type { UserInfo } from './types.ts';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

/** The user of a verified certificate, or undefined when it cannot identify one. */
export function userFromCertificate(der: Uint8Array): UserInfo | undefined {
  const cert = new x509.X509Certificate(der);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  if (eku && !eku.usages.some((u) => u === CLIENT_AUTH || u === ANY_EXTENDED_KEY_USAGE)) return undefined;
  const name = cert.subjectName.getField('CN')[0];
  if (!name) return undefined;
  return { name, groups: cert.subjectName.getField('O') };
}

/** One lookup per TLS connection: keep-alive requests reuse the connection's identity. */
const byConnection = new WeakMap<TLSSocket, UserInfo | null>();

export function authenticateClientCertificate(req: IncomingMessage): UserInfo | undefined {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const known = byConnection.get(socket);
  if (known !== undefined) return known ?? undefined;
  let user: UserInfo | undefined;
  if (socket.authorized) {
    const raw = socket.getPeerCertificate(false)?.raw;
    if (raw?.length) {
      try {
        user = userFromCertificate(raw);
      } catch {
        user = undefined;
      }
    }
  }
  byConnection.set(socket, user ?? null);
  return user;
}
