import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FETCH_BLOCKED_PORTS, freePorts } from '../../../../dev/local/processes/free-ports.ts';

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

  it('never hands out a port that fetch refuses, even when the draw lands on it', async () => {
    // The draw lands on 10080 first, then on 10080 again, then on ports next to it (spares in case one is taken).
    const offsets = [80, 80, 81, 82, 83, 84, 85, 86];
    const drawn: number[] = [];
    const ports = await freePorts(2, () => {
      const next = offsets.shift();
      if (next === undefined) throw new Error('drawn more often than the test expects');
      drawn.push(10_000 + next);
      return next;
    });
    expect(drawn.filter((p) => p === 10_080)).toHaveLength(2);
    expect(ports).not.toContain(10_080);
    expect(ports).toHaveLength(2);
  });

  it('skips only ports that Node’s fetch refuses as bad ports', async () => {
    // If Node's fetch stopped refusing one of these, skipping it would be for nothing: this says so.
    for (const port of FETCH_BLOCKED_PORTS) {
      const refused = await fetch(`http://127.0.0.1:${port}/`).then(
        () => undefined,
        (err: Error) => (err.cause as Error | undefined)?.message,
      );
      expect(refused, `fetch to port ${port}`).toBe('bad port');
    }
    // A neighbouring port is not refused for its number: the connection itself is tried (and refused or answered).
    const neighbour = await fetch('http://127.0.0.1:10081/').then(
      () => 'answered',
      (err: Error) => (err.cause as Error | undefined)?.message ?? err.message,
    );
    expect(neighbour).not.toBe('bad port');
  });
});
