/**
 * The Secrets Manager SDK exports secrets.ts uses, named statically: secrets.ts loads this module on the
 * first secret read (a chunk of its own in the bundle), and the per-function permission check
 * (test/functions/common/permissions.test.ts) reads these names to know which IAM actions the code can call.
 * A dynamic import of the SDK package itself would hide them.
 */
export { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
