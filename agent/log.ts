/**
 * A small JSON-lines logger. The agent logs names, paths, hashes and counts, never the contents of a
 * kubeconfig, certificate, key or token; errors are logged by message only (client errors can carry
 * request options, which hold the TLS material).
 */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function createLogger(
  opts: { level?: LogLevel; base?: Record<string, unknown>; write?: (line: string) => void } = {},
): Logger {
  const min = RANK[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emit =
    (level: Exclude<LogLevel, 'silent'>) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      if (RANK[level] < min) return;
      write(JSON.stringify({ time: new Date().toISOString(), level, message, ...opts.base, ...fields }));
    };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

export const silentLogger: Logger = createLogger({ level: 'silent' });

/** An error as a short, safe string: its message (and HTTP status), never the object with its options. */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const body = (err as { body?: { message?: unknown } }).body;
    const detail = typeof body?.message === 'string' ? `: ${body.message}` : '';
    return `${typeof code === 'number' ? `HTTP ${code} ` : ''}${err.message.split('\n')[0]}${detail}`.slice(0, 500);
  }
  return String(err).slice(0, 500);
}
