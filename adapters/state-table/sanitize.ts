/**
 * Error text that goes into the table, logs or Kubernetes Events must never carry credentials. Errors we
 * raise ourselves are built safe; this is the second line of defence for text from libraries (an HTTP
 * client may echo a URL with a presigned query, a YAML parser may echo a line of a kubeconfig).
 */
const REDACTIONS: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)/g, '[redacted pem]'],
  [/k8s-aws-v1\.[A-Za-z0-9_-]+/g, '[redacted token]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [
    /\b(token|password|secret|client-key-data|client-certificate-data|certificate-authority-data)(["']?\s*[:=]\s*)["']?[^\s"',}]+/gi,
    '$1$2[redacted]',
  ],
  [/(X-Amz-[A-Za-z-]+=)[^&\s"]+/g, '$1[redacted]'],
  [/\bA(KIA|SIA)[A-Z0-9]{12,}\b/g, '[redacted key id]'],
];

export const MAX_ERROR_LENGTH = 200;

export function sanitizeErrorMessage(message: unknown, maxLength = MAX_ERROR_LENGTH): string {
  let text = typeof message === 'string' ? message : message instanceof Error ? message.message : String(message);
  for (const [pattern, replacement] of REDACTIONS) text = text.replace(pattern, replacement);
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}
