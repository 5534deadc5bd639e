import { sha256Hex } from '../hash.ts';

/** Names of everything rendered for one PoolSpirit. */
export interface ObjectNames {
  /** Base name: Deployment, Service and ServiceAccount. A DNS-1035 label (Service names must be). */
  base: string;
  caSecret: string;
  pkiSecret: string;
  agentSecret: string;
  bootstrapConfigMap: string;
}

const MAX_BASE = 47; // leaves room for the longest suffix ("-bootstrap", "-kubeconfig") within 63

/**
 * Derives names from the PoolSpirit name. NodePool names are DNS subdomains (dots, up to 253 characters)
 * but Service names must be DNS-1035 labels, so dots become dashes and long names are cut and suffixed
 * with a hash of the full name to stay unique.
 */
export function objectNames(poolSpiritName: string): ObjectNames {
  let base = `ps-${poolSpiritName}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  if (base.length > MAX_BASE || base !== `ps-${poolSpiritName}`) {
    base = `${base.slice(0, MAX_BASE - 9).replace(/-+$/, '')}-${sha256Hex(poolSpiritName).slice(0, 8)}`;
  }
  return {
    base,
    caSecret: `${base}-ca`,
    pkiSecret: `${base}-pki`,
    agentSecret: `${base}-agent`,
    bootstrapConfigMap: `${base}-bootstrap`,
  };
}
