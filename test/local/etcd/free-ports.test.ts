import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts } from '../../../local/etcd/launch.ts';

const ephemeralMin = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 32_768;
  }
})();

describe('freePorts', () => {
  it('hands out distinct ports below the ephemeral range, each free to listen on', async () => {
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(10_000);
      // Outgoing connections take their source ports from the ephemeral range: never ours.
      expect(p).toBeLessThan(ephemeralMin);
    }
    for (const p of ports) {
      const server = createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(p, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
