/**
 * Time as the bus sees it. Retry backoff, maximum event age and schedules all go through a Clock, so tests
 * can drive them with FakeClock instead of waiting.
 */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** A manual clock: timers fire only when `advance()` moves time past them, in time order. */
export class FakeClock implements Clock {
  #now: number;
  #timers: FakeTimer[] = [];
  #nextId = 1;

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.#now = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.#timers.length;
  }

  /** When the earliest timer fires, or undefined when none is set. */
  nextTimerAt(): number | undefined {
    return this.#timers.reduce<number | undefined>(
      (min, t) => (min === undefined || t.at < min ? t.at : min),
      undefined,
    );
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due (including ones set by timers that fire),
   * and lets promise callbacks run between timers so async work started by one timer can set the next.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

async function flushMicrotasks(): Promise<void> {
  // setImmediate runs after pending promise jobs and I/O callbacks, so chained awaits settle first.
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
