/**
 * Drives the event-ruler judge (tools/event-ruler, built by `bash scripts/event-ruler.sh` into .cache/event-ruler):
 * AWS's event-ruler, the library EventBridge's pattern language comes from, asked about many (pattern, event)
 * cases in one Java process. The tests compare its answers with the local bus's own matcher
 * (test/dev/local/bus/pattern-judge.e2e.test.ts). Test tooling only: nothing at run time needs Java.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = resolve(import.meta.dirname, '../../../..');
export const EVENT_RULER_CLASSPATH_FILE = join(ROOT, '.cache', 'event-ruler', 'classpath');

/** One question: the pattern and the event as JSON text, handed to event-ruler unchanged. */
export interface JudgeCase {
  id: number;
  pattern: string;
  event: string;
}

/** event-ruler's answer: `valid` is JsonRuleCompiler.check's verdict, `match` rulesForJSONEvent's. */
export interface JudgeAnswer {
  id: number;
  valid: boolean;
  /** Why the pattern is invalid (event-ruler's words), or what went wrong with the event. */
  error?: string;
  match?: boolean;
}

/** The judge refuses longer lines; a case is bounded well below it. */
const MAX_CASE_LINE_CHARS = 256 * 1024;
/** Answers are short; a longer line means something other than the judge is talking. */
const MAX_ANSWER_LINE_CHARS = 64 * 1024;

export function eventRulerClasspath(): string {
  if (!existsSync(EVENT_RULER_CLASSPATH_FILE)) {
    throw new Error(
      `${EVENT_RULER_CLASSPATH_FILE} is missing: build the event-ruler judge with \`bash scripts/event-ruler.sh\` ` +
        '(npm test runs it through scripts/ensure-env.sh --tests; it needs Java 17 and Maven)',
    );
  }
  return readFileSync(EVENT_RULER_CLASSPATH_FILE, 'utf8').trim();
}

function isAnswer(v: unknown): v is JudgeAnswer {
  if (typeof v !== 'object' || v === null) return false;
  const a = v as Record<string, unknown>;
  return (
    typeof a.id === 'number' &&
    typeof a.valid === 'boolean' &&
    (a.error === undefined || typeof a.error === 'string') &&
    (a.match === undefined || typeof a.match === 'boolean')
  );
}

/**
 * Starts one Java process, streams every case to it and collects one answer per case, in the cases' order.
 * Rejects if the judge dies, answers something unreadable, or leaves a case unanswered.
 */
export async function judgeWithEventRuler(cases: readonly JudgeCase[]): Promise<JudgeAnswer[]> {
  const classpath = eventRulerClasspath();
  for (const c of cases) {
    const chars = c.pattern.length + c.event.length;
    if (chars > MAX_CASE_LINE_CHARS / 2) throw new Error(`case ${c.id}: pattern and event hold ${chars} characters`);
  }
  const child = spawn(
    'java',
    [
      // Start-up dominates a run of a few thousand small cases: one thread of GC, the quick JIT tier.
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      '-Xss4m',
      // event-ruler resolves strings that look like IPv4 addresses with InetAddress; no DNS, ever.
      '-Djdk.net.hosts.file=/dev/null',
      '-cp',
      classpath,
      'judge.Judge',
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 16_384) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolveExit, rejectExit) => {
    child.on('error', (err) =>
      rejectExit(
        new Error(
          `cannot start java (${err.message}): install Java 17 (apt-get install -y openjdk-17-jdk-headless) and run bash scripts/event-ruler.sh`,
        ),
      ),
    );
    child.on('close', (code) => resolveExit(code));
  });

  const answers = new Map<number, JudgeAnswer>();
  const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
  const reading = (async () => {
    for await (const line of lines) {
      if (line.length > MAX_ANSWER_LINE_CHARS)
        throw new Error(`event-ruler judge: answer line of ${line.length} chars`);
      const parsed: unknown = JSON.parse(line);
      if (!isAnswer(parsed)) throw new Error(`event-ruler judge: unreadable answer ${line.slice(0, 200)}`);
      answers.set(parsed.id, parsed);
    }
  })();

  const writing = (async () => {
    for (const c of cases) {
      const line = `${JSON.stringify({ id: c.id, pattern: c.pattern, event: c.event })}\n`;
      if (!child.stdin.write(line)) await new Promise((r) => child.stdin.once('drain', r));
    }
    child.stdin.end();
  })();

  const [code] = await Promise.all([exited, writing, reading]);
  if (code !== 0) throw new Error(`event-ruler judge exited ${code}: ${stderr.trim()}`);
  return cases.map((c) => {
    const answer = answers.get(c.id);
    if (!answer) throw new Error(`event-ruler judge left case ${c.id} unanswered; stderr: ${stderr.trim()}`);
    return answer;
  });
}
