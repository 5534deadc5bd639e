/** Messages between the local stack and its function worker threads (structured-clone safe). */
export interface InvokeMessage {
  id: number;
  container: number;
  event: unknown;
  /** The Lambda context's plain fields; the worker adds getRemainingTimeInMillis from `deadline`. */
  context: Record<string, unknown>;
  deadline: number;
}

export type ResultMessage =
  | { id: number; ok: true; result: unknown }
  /** `afterMs` is a RequeueError's wish (core/outcome.ts), carried so the bus can honour it. */
  | { id: number; ok: false; error: { name: string; message: string; afterMs?: number } };
