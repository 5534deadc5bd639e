/**
 * KubeConfigs of the two apiservers the agent talks to. Errors name the file, never its contents.
 */
import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export function loadKubeConfigFile(path: string, what: string): KubeConfig {
  if (!existsSync(path)) throw new Error(`${what}: kubeconfig file ${path} does not exist`);
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    // The parser's message can quote the offending line, which may hold key material: say where, not what.
    throw new Error(`${what}: kubeconfig file ${path} is not a valid kubeconfig (${(err as Error).name})`);
  }
  if (!kc.getCurrentCluster()) throw new Error(`${what}: kubeconfig file ${path} has no current cluster`);
  return kc;
}

/** The host cluster: a kubeconfig file, or the pod's service account when no file is given. */
export function loadHostKubeConfig(path: string | undefined): KubeConfig {
  if (path) return loadKubeConfigFile(path, 'host cluster');
  if (!process.env.KUBERNETES_SERVICE_HOST || !existsSync(SERVICE_ACCOUNT_TOKEN)) {
    throw new Error(
      `host cluster: no --host-kubeconfig given and not running in a pod (KUBERNETES_SERVICE_HOST unset or ${SERVICE_ACCOUNT_TOKEN} missing)`,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return kc;
}
