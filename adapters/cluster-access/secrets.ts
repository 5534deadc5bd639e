/** Where kubeconfigs kept in a secret store come from: Secrets Manager in the cloud, a map in tests. */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

export interface SecretSource {
  /** The secret's string; rejects with an error whose `name` classifies the failure. */
  getSecretString(secretId: string, region?: string): Promise<string>;
}

export function secretsManagerSource(makeClient: (region?: string) => SecretsManagerClient = (region) =>
  new SecretsManagerClient(region ? { region } : {})): SecretSource {
  const clients = new Map<string, SecretsManagerClient>();
  return {
    async getSecretString(secretId, region) {
      const cacheKey = region ?? '';
      let client = clients.get(cacheKey);
      if (!client) {
        client = makeClient(region);
        clients.set(cacheKey, client);
      }
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      if (typeof out.SecretString !== 'string') {
        const err = new Error('secret has no string value');
        err.name = 'InvalidSecretValue';
        throw err;
      }
      return out.SecretString;
    },
  };
}
