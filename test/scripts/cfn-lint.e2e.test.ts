import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPythonJudges, PY_JUDGES_BIN } from '../support/moto-server.ts';
import { packaged } from '../support/packaged.ts';
import type { Template } from './cfn.ts';

/**
 * cfn-lint (AWS's CloudFormation linter, from the venv `bash scripts/python-judges.sh` installs) on the
 * template `npm run package` writes: no finding at all, errors or warnings. A check the template cannot meet
 * is suppressed on its resource in serverless.yml (`Metadata: cfn-lint: config: ignore_checks`), with the
 * reason beside it.
 */
const CFN_LINT = join(PY_JUDGES_BIN, 'cfn-lint');
const run = promisify(execFile);

interface Finding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
  Location: { Path: (string | number)[] };
}

/** cfn-lint's findings on template files, by file. */
async function lint(files: string[]): Promise<Map<string, Finding[]>> {
  const { stdout } = await run(CFN_LINT, ['--format', 'json', '--', ...files], { maxBuffer: 16 * 1024 * 1024 }).catch(
    (err: { stdout?: string; stderr?: string; message: string }) => {
      // Its exit code says which levels it found; the findings are on stdout either way.
      if (!err.stdout) throw new Error(`cfn-lint failed: ${err.stderr || err.message}`);
      return { stdout: err.stdout };
    },
  );
  const findings = JSON.parse(stdout) as Finding[];
  return new Map(files.map((f) => [f, findings.filter((x) => x.Filename === f)]));
}

const shown = (findings: Finding[] = []) =>
  findings.map((f) => `${f.Level} ${f.Rule.Id} at ${f.Location.Path.join('/')}: ${f.Message}`).join('\n');

let work: string;
let template: Template;
let files: { packaged: string; secretsAndBadTopic: string };
let findings: Map<string, Finding[]>;

/** The packaged template as another stage would package it: its parameters' defaults set. */
async function withDefaults(template: Template, name: string, defaults: Record<string, string>): Promise<string> {
  const file = join(work, `${name}.json`);
  const parameters = Object.fromEntries(
    Object.entries(template.Parameters ?? {}).map(([k, p]) => [k, { ...p, Default: defaults[k] ?? p.Default }]),
  );
  await writeFile(file, JSON.stringify({ ...template, Parameters: parameters }));
  return file;
}

beforeAll(async () => {
  assertPythonJudges(CFN_LINT);
  const { templatePath } = await packaged();
  template = JSON.parse(await readFile(templatePath, 'utf8')) as Template;
  work = await mkdtemp(join(tmpdir(), 'cfn-lint-'));
  files = {
    packaged: templatePath,
    secretsAndBadTopic: await withDefaults(template, 'secrets-and-bad-topic', {
      ClusterAccess: 'secret',
      AlarmTopicArn: 'oncall@example.com',
    }),
  };
  // Two processes side by side: most of cfn-lint's time is its own start-up.
  const [asPackaged, variant] = await Promise.all([lint([files.packaged]), lint([files.secretsAndBadTopic])]);
  findings = new Map([...asPackaged, ...variant]);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('cfn-lint', () => {
  it('finds nothing in the packaged template', () => {
    expect(shown(findings.get(files.packaged))).toBe('');
  });

  it('takes secret cluster access, and refuses an alarm topic that is not an SNS topic ARN, naming the parameter', () => {
    expect(findings.get(files.secretsAndBadTopic)?.map((f) => [f.Level, f.Rule.Id, f.Location.Path.join('/')])).toEqual(
      [['Error', 'E2015', 'Parameters/AlarmTopicArn/Default']],
    );
  });

  it("takes docs/deploy.md's example alarm topic", () => {
    const pattern = new RegExp(
      String((template.Parameters!.AlarmTopicArn as { AllowedPattern?: string }).AllowedPattern),
    );
    expect(pattern.test('arn:aws:sns:eu-west-1:123456789012:pool-spirit-oncall')).toBe(true);
    expect(pattern.test('')).toBe(true);
  });
});
