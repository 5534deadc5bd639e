/** Where kubeconfigs kept in a secret store come from: Secrets Manager in the cloud, a map in tests. */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * The SDK client is loaded on the first secret read, as a chunk of its own: with EKS access (the default)
 * no invocation ever reads a secret, and every function would otherwise compile the client on each cold
 * start (docs/deploy.md, "Bundle size and load time").
 */
const loadSdk = () => import('./secrets-sdk.ts');

export interface SecretSource {
  /** The secret's string; rejects with an error whose `name` classifies the failure. */
  getSecretString(secretId: string, region?: string): Promise<string>;
}

export function secretsManagerSource(
  makeClient: (region?: string) => SecretsManagerClient | Promise<SecretsManagerClient> = async (region) =>
    new (await loadSdk()).SecretsManagerClient(region ? { region } : {}),
): SecretSource {
  // Promises, so two first reads at once in one region still make one client.
  const clients = new Map<string, Promise<SecretsManagerClient>>();
  return {
    async getSecretString(secretId, region) {
      const cacheKey = region ?? '';
      let client = clients.get(cacheKey);
      if (!client) {
        client = Promise.resolve(makeClient(region));
        clients.set(cacheKey, client);
      }
      const { GetSecretValueCommand } = await loadSdk();
      const out = await (await client).send(new GetSecretValueCommand({ SecretId: secretId }));
      if (typeof out.SecretString !== 'string') {
        const err = new Error('secret has no string value');
        err.name = 'InvalidSecretValue';
        throw err;
      }
      return out.SecretString;
    },
  };
}
