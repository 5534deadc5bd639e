/** Messages between the local stack and its function worker threads (structured-clone safe). */
import type { Context } from 'aws-lambda';

/** The Lambda context without its functions, which a message between threads cannot carry. */
export type PlainContext = Omit<Context, 'getRemainingTimeInMillis' | 'done' | 'fail' | 'succeed'>;

export interface InvokeMessage {
  id: number;
  container: number;
  event: unknown;
  /** The Lambda context's plain fields; the worker adds getRemainingTimeInMillis from `deadline`. */
  context: PlainContext;
  deadline: number;
}

export type ResultMessage =
  | { id: number; ok: true; result: unknown }
  /** `afterMs` is a RequeueError's wish (core/outcome.ts), carried so the bus can honour it. */
  | { id: number; ok: false; error: { name: string; message: string; afterMs?: number } };
