/**
 * Each function's Lambda settings as serverless.yml declares them (memorySize, timeout, reservedConcurrency,
 * falling back to the provider's), read from the same file the cloud packaging and the local bus use — so
 * the cost model and the scale model price and bound exactly what is deployed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FUNCTIONS, type FunctionName } from '../../../core/cost/counts.ts';
import { parseServerlessYaml } from '../bus/serverless-config.ts';

export interface FunctionSettings {
  memorySizeMb: number;
  timeoutSeconds: number;
  reservedConcurrency: number | null;
  /** How long Lambda keeps an event it could not run yet (throttled) before it gives up (maximumEventAge). */
  maximumEventAgeSeconds: number;
}

const SERVERLESS_YML = join(import.meta.dirname, '..', '..', '..', 'serverless.yml');

export function functionSettings(file = SERVERLESS_YML): Record<FunctionName, FunctionSettings> {
  const doc = parseServerlessYaml(readFileSync(file, 'utf8'));
  const provider = (doc.provider ?? {}) as Record<string, unknown>;
  const fns = (doc.functions ?? {}) as Record<string, Record<string, unknown>>;
  return Object.fromEntries(
    FUNCTIONS.map((name) => {
      const f = fns[name];
      if (!f) throw new Error(`${file}: no function "${name}"`);
      const num = (v: unknown, field: string): number => {
        if (typeof v !== 'number')
          throw new Error(`${file}: functions.${name}.${field} (or provider.${field}) must be a number`);
        return v;
      };
      return [
        name,
        {
          memorySizeMb: num(f.memorySize ?? provider.memorySize, 'memorySize'),
          timeoutSeconds: num(f.timeout ?? provider.timeout, 'timeout'),
          reservedConcurrency: typeof f.reservedConcurrency === 'number' ? f.reservedConcurrency : null,
          // Lambda's default for asynchronous invocations is 6 hours.
          maximumEventAgeSeconds: typeof f.maximumEventAge === 'number' ? f.maximumEventAge : 21_600,
        },
      ];
    }),
  ) as Record<FunctionName, FunctionSettings>;
}

export function functionMemoryMb(file = SERVERLESS_YML): Record<FunctionName, number> {
  const s = functionSettings(file);
  return Object.fromEntries(FUNCTIONS.map((f) => [f, s[f].memorySizeMb])) as Record<FunctionName, number>;
}
