/** Headless Chromium (Debian's `chromium`, installed by scripts/ensure-env.sh) for the HTML report tests. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

const QUIET_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--hide-scrollbars',
];

/** Loads a file in headless Chromium and returns the DOM it built (`--dump-dom`), or writes a screenshot. */
export async function chromium(
  file: string,
  mode: { dumpDom: true } | { screenshot: string; width?: number; height?: number },
): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'ps-chromium-'));
  try {
    const args = [...QUIET_FLAGS, `--user-data-dir=${profile}`];
    if ('dumpDom' in mode) args.push('--dump-dom');
    else args.push(`--screenshot=${mode.screenshot}`, `--window-size=${mode.width ?? 1280},${mode.height ?? 1800}`);
    args.push(pathToFileURL(file).href);
    const { stdout } = await run(CHROMIUM, args, { timeout: 60_000, maxBuffer: 64 * 2 ** 20 });
    return stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

/** Text content of the dumped DOM: tags dropped, entities decoded, whitespace collapsed. */
export function visibleText(dom: string): string {
  return dom
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<title>[\s\S]*?<\/title>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}
