/** Reading the agent's own certificate files, for checks made before anything is sent. */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The CN of the first certificate in a PEM file (etcd names a TLS client by it once auth is on). */
export function certificateCommonName(file: string, flag: string): string {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw new Error(`${flag} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const subject = new X509Certificate(pem).subject;
  const cn = subject.split('\n').find((line) => line.startsWith('CN='));
  if (!cn) throw new Error(`${flag} ${file}: the certificate has no CN`);
  return cn.slice(3);
}
