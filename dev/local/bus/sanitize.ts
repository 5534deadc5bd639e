/**
 * Error text goes into the dead-letter store and onto screens, so it must not carry credentials. Anything
 * that looks like key material, a bearer token, a signed URL, a password assignment or a long opaque
 * blob is replaced, stack traces are dropped and the text is bounded.
 */
const REDACTIONS: [RegExp, string][] = [
  [/-----BEGIN [A-Z ]+-----[\s\S]*?(-----END [A-Z ]+-----|$)/g, '[redacted pem]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, '[redacted access key id]'],
  [/\b(X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|Signature)=[^&\s"']+/gi, '$1=[redacted]'],
  [
    /\b(password|passwd|secret|token|api[_-]?key|client[_-]?key|private[_-]?key)(["']?\s*[:=]\s*["']?)[^\s"',}]+/gi,
    '$1$2[redacted]',
  ],
  [/\bk8s-aws-v1\.[A-Za-z0-9_-]+/g, 'k8s-aws-v1.[redacted]'],
  [/[A-Za-z0-9+/_-]{64,}={0,2}/g, '[redacted blob]'],
];

export const MAX_ERROR_LENGTH = 1000;

export function sanitizeError(err: unknown): string {
  let text: string;
  if (err instanceof Error) text = err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  else if (typeof err === 'string') text = err;
  else {
    try {
      text = JSON.stringify(err) ?? String(err);
    } catch {
      text = String(err);
    }
  }
  // Only the first line or two carry meaning; later lines are often stack frames or dumped objects.
  text = text
    .split('\n')
    .filter((l) => !/^\s+at\s/.test(l))
    .join('\n');
  for (const [pattern, replacement] of REDACTIONS) text = text.replace(pattern, replacement);
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH)}… (truncated)` : text;
}
