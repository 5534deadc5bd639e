/**
 * Which status sections to write and when. Pure state, no I/O: the agent offers each new observation and
 * asks for the merge patch to send; only after the write succeeded is the section marked written, so a
 * failed write is retried with the newest observation on the next tick.
 *
 * Write policy: a meaningful change (new leader, alarm, health flip, defrag, withdrawal, a new bootstrap)
 * is written at once; otherwise the section is refreshed once per report interval, which keeps a steady
 * pool at a couple of status writes per interval however often its leader renews.
 */
type Fields = Record<string, unknown>;

export interface SectionSpec<T extends Fields> {
  /** Keys the agent owns in this section: absent in a new value → null in the merge patch (deleted). */
  clearable: readonly (keyof T & string)[];
  meaningful(before: T | undefined, after: T): boolean;
}

export class ReportSection<T extends Fields> {
  private readonly spec: SectionSpec<T>;
  private written: T | undefined;
  private writtenAt: number | undefined;
  private pending: { value: T; patch: Fields } | undefined;

  constructor(spec: SectionSpec<T>) {
    this.spec = spec;
  }

  /** Offers a fresh observation; it becomes pending when meaningful or when the periodic refresh is due. */
  offer(value: T, now: number, reportIntervalMs: number): void {
    const due = this.writtenAt === undefined || now - this.writtenAt >= reportIntervalMs;
    const base = this.pending?.value ?? this.written;
    if (this.pending || due || this.spec.meaningful(base, value))
      this.pending = { value, patch: mergePatchFor(value, this.spec.clearable) };
  }

  /**
   * Writes `value` on the next report whatever changed: a new bootstrap, or a withdrawal (a value without
   * the observed fields, which the merge patch then deletes: unknown).
   */
  force(value: T): void {
    this.pending = { value, patch: mergePatchFor(value, this.spec.clearable) };
  }

  pendingPatch(): Fields | undefined {
    return this.pending?.patch;
  }

  /** Call after the patch from pendingPatch() was accepted. */
  markWritten(now: number): void {
    if (!this.pending) return;
    this.written = this.pending.value;
    this.writtenAt = now;
    this.pending = undefined;
  }

  /** What the status holds as far as this agent knows (last written value). */
  current(): T | undefined {
    return this.written;
  }
}

/** A JSON merge patch that sets the value's fields and deletes the owned ones it lacks. */
export function mergePatchFor(value: Fields, clearable: readonly string[]): Fields {
  const patch: Fields = {};
  for (const key of clearable) patch[key] = null;
  for (const [key, v] of Object.entries(value)) if (v !== undefined) patch[key] = v;
  return patch;
}
