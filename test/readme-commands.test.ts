/**
 * Every shell command of the README's quick start ("Two commands", "First payment in a minute")
 * and selling sections ("Earning: paylinks and fund requests", "Merchants and webhooks") runs as
 * printed (issue 43), read from README.md at test time: its ```sh blocks, in order, each command
 * in bash in a temp HOME and working directory, against a daemon this test starts. It fails naming
 * the first command that fails, with its output.
 *
 * What is not the printed text, and why (each is what a reader's machine supplies):
 * - `npm install && npm start` and `VAR=… npm start`: the test starts (or restarts, keeping the data
 *   dir and the API port) `bun src/main.ts serve` — what `npm start` runs — with that line's
 *   variables, on a free API port and a free simnet port (8787 and 8899 may be taken here), in the
 *   working directory, so its data is `./data` there as a reader's is in the checkout.
 *   `npm install && npm test` is skipped: it would run this suite inside itself.
 * - The daemon's URL: `127.0.0.1:8787` in a command becomes the daemon's address, and the CLI gets
 *   it as AGENT_WALLET_URL (the CLI's default is 8787).
 * - `npm run -s agent-wallet --` and `agent-wallet`: the same CLI entry (`bun src/main.ts`), as an
 *   `agent-wallet` on PATH.
 * - Your API on port 3000 (the gate's upstream) is a stub this test serves on a free port; the
 *   gate started with `&` gets `--port 0` and is stopped at the end; `127.0.0.1:8402` after it
 *   becomes the address it printed.
 * - Placeholders are filled as a reader fills them: `<address>` from the first register's output,
 *   `<shop-bot-username>` from Shop Bot's, `<request_id>` from the last `request create`,
 *   `<your-solana-address>` is the reader's own address (a fresh key). The claims the README asks
 *   for in words ("Open the claim_url …", "claim it as you claimed …") are done over HTTP as a
 *   browser does: the claim form, the link from `admin mail`, the Claim button.
 *
 * AW_README_VERBOSE=1 prints each command as run, its time and its output.
 */
import { afterAll, expect, test } from 'bun:test';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSigner } from '@solana/kit';
import { MAIN } from './helpers/daemon.ts';
import { tempDir } from './helpers/services.ts';

const README = readFileSync(join(import.meta.dir, '..', 'README.md'), 'utf8');
const SECTIONS = ['## Two commands', '## First payment in a minute (simnet)', '## Earning: paylinks and fund requests', '## Merchants and webhooks'];
const COMMAND_TIMEOUT_MS = 60_000;

/** The ```sh blocks of a `## ` section (its subsections included), in order. */
function shBlocks(heading: string): string[] {
  const start = README.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`README.md has no section "${heading}"`);
  const next = README.indexOf('\n## ', start + 1);
  const body = README.slice(start, next === -1 ? undefined : next);
  return [...body.matchAll(/\n```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
}

/** A block's lines as commands (continuations joined) and its comment-only lines, in order. */
function linesOf(block: string): { kind: 'command' | 'comment'; text: string }[] {
  const out: { kind: 'command' | 'comment'; text: string }[] = [];
  let pending = '';
  for (const line of block.split('\n')) {
    if (!pending && /^\s*#/.test(line)) {
      out.push({ kind: 'comment', text: line.trim() });
      continue;
    }
    if (!pending && !line.trim()) continue;
    if (/\\\s*$/.test(line)) {
      pending += `${line.replace(/\\\s*$/, '')} `;
      continue;
    }
    out.push({ kind: 'command', text: `${pending}${line}`.trim() });
    pending = '';
  }
  return out;
}

/** The command without its trailing comment (a `#` after whitespace, outside quotes). */
function withoutComment(command: string): string {
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && i > 0 && /\s/.test(command[i - 1]!)) return command.slice(0, i).trimEnd();
  }
  return command.trim();
}

// ---- the reader's machine -------------------------------------------------------------------------
const work = tempDir('aw-readme-cwd-');
const home = tempDir('aw-readme-home-');
const bin = tempDir('aw-readme-bin-');
writeFileSync(join(bin, 'agent-wallet'), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
chmodSync(join(bin, 'agent-wallet'), 0o755);

/** The environment of a reader's shell: none of the suite's AGENT_WALLET_* (the preload points AGENT_WALLET_HOME elsewhere). */
const readerEnv = (): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_'))),
  HOME: home,
  NO_COLOR: '1',
});

interface Daemon {
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
  url: string;
  logs: () => string;
}
let daemon: Daemon | null = null;
const background: ReturnType<typeof Bun.spawn>[] = [];
const upstream = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (req) => Response.json({ report: 'the paid answer', path: new URL(req.url).pathname }) });

afterAll(async () => {
  for (const p of background) p.kill('SIGTERM');
  await Promise.all(background.map((p) => p.exited));
  await stopDaemon();
  upstream.stop(true);
});

function drain(stream: ReadableStream<Uint8Array>, into: { text: string }) {
  const dec = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) into.text += dec.decode(chunk);
  })();
}

async function startDaemon(env: Record<string, string>, port: number): Promise<Daemon> {
  const proc = Bun.spawn([process.execPath, MAIN, 'serve', '--port', String(port), '--simnet-port', '0'], {
    cwd: work,
    env: { ...readerEnv(), ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = { text: '' };
  const err = { text: '' };
  drain(proc.stdout as ReadableStream<Uint8Array>, out);
  drain(proc.stderr as ReadableStream<Uint8Array>, err);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const line = out.text.split('\n').find((l) => l.includes('"api_url"'));
    if (line) {
      const apiUrl = String((JSON.parse(line) as { api_url: string }).api_url);
      return { proc, port: Number(new URL(apiUrl).port), url: apiUrl, logs: () => out.text + err.text };
    }
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the daemon did not start:\n${out.text}\n${err.text}`);
    await Bun.sleep(20);
  }
}

async function stopDaemon() {
  if (!daemon) return;
  daemon.proc.kill('SIGTERM');
  await daemon.proc.exited;
  daemon = null;
}

const cliEnv = () => ({ ...readerEnv(), PATH: `${bin}:${process.env.PATH}`, ...(daemon ? { AGENT_WALLET_URL: daemon.url } : {}) });

async function run(command: string): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(['bash', '-o', 'pipefail', '-c', command], { cwd: work, env: cliEnv(), stdout: 'pipe', stderr: 'pipe' });
  const timer = setTimeout(() => proc.kill('SIGKILL'), COMMAND_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, out: `${stdout}${stderr ? `\n${stderr}` : ''}` };
}

/** A command ending in `&`: started, its first line awaited (the gate's start line), stopped at the end. */
async function runInBackground(command: string): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn(['bash', '-c', `exec ${command}`], { cwd: work, env: cliEnv(), stdout: 'pipe', stderr: 'pipe' });
  background.push(proc);
  const out = { text: '' };
  drain(proc.stdout as ReadableStream<Uint8Array>, out);
  drain(proc.stderr as ReadableStream<Uint8Array>, out);
  const deadline = Date.now() + COMMAND_TIMEOUT_MS;
  while (!out.text.includes('\n') && proc.exitCode === null && Date.now() < deadline) await Bun.sleep(20);
  return { code: proc.exitCode ?? (out.text.includes('\n') ? 0 : 1), out: out.text };
}

// ---- what the reader does in the browser ---------------------------------------------------------
/** Submits the first POST form of `pageUrl` with `fields` (and its hidden inputs, e.g. the CSRF token), cookies kept. */
async function submitForm(pageUrl: string, fields: Record<string, string>): Promise<Response> {
  const page = await fetch(pageUrl, { redirect: 'manual' });
  const cookie = (page.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  const html = await page.text();
  const form = /<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form on ${pageUrl} (HTTP ${page.status}):\n${html.slice(0, 500)}`);
  const action = /action="([^"]*)"/.exec(form[0])?.[1] ?? pageUrl;
  const body = new URLSearchParams();
  for (const m of form[1]!.matchAll(/<input[^>]*type="hidden"[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(m[0])?.[1];
    if (name) body.set(name, (/value="([^"]*)"/.exec(m[0])?.[1] ?? '').replaceAll('&amp;', '&'));
  }
  for (const [k, v] of Object.entries(fields)) body.set(k, v);
  return await fetch(new URL(action.replaceAll('&amp;', '&'), pageUrl), { method: 'POST', body, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
}

/** "Open the claim_url, enter the claim code and your e-mail; open the link (`admin mail`) and press Claim." */
async function claim(claimUrl: string, claimCode: string, email: string) {
  const sent = await submitForm(claimUrl, { claim_code: claimCode, email });
  if (sent.status !== 200) throw new Error(`the claim form answered HTTP ${sent.status}: ${(await sent.text()).slice(0, 500)}`);
  const mail = await run('agent-wallet admin mail --json');
  const items = (JSON.parse(mail.out) as { items: { to: string; links: { label: string; url: string }[]; created_at: string }[] }).items;
  // The newest claim link to this e-mail (an earlier claim's link is spent).
  const link = items
    .filter((m) => m.to === email && m.links.some((l) => l.label === 'claim'))
    .sort((a, b) => b.created_at.localeCompare(a.created_at))[0]
    ?.links.find((l) => l.label === 'claim')?.url;
  if (!link) throw new Error(`no claim link mailed to ${email}:\n${mail.out}`);
  const claimed = await submitForm(link, {});
  if (claimed.status >= 400) throw new Error(`pressing Claim answered HTTP ${claimed.status}: ${(await claimed.text()).slice(0, 500)}`);
}

// ---- placeholders, filled from earlier output ----------------------------------------------------
const outputs: { command: string; out: string }[] = [];
/** A field as the CLI prints it: `field: value` (human) or `"field": "value"` (JSON). */
function field(out: string, name: string): string | null {
  const m = new RegExp(`"?${name}"?\\s*[:=]\\s*"?([^"\\s,]+)`).exec(out);
  return m ? m[1]! : null;
}
function fromLast(match: (command: string) => boolean, name: string, pattern?: RegExp): string {
  for (let i = outputs.length - 1; i >= 0; i--) {
    if (!match(outputs[i]!.command)) continue;
    const v = pattern ? (pattern.exec(outputs[i]!.out)?.[0] ?? null) : field(outputs[i]!.out, name);
    if (v) return v;
  }
  throw new Error(`no earlier command printed ${name}`);
}
let readerAddress = '';
const PLACEHOLDERS: Record<string, () => string> = {
  '<address>': () => fromLast((c) => c.includes('register --name "Research Agent"'), 'address'),
  '<shop-bot-username>': () => fromLast((c) => c.includes('register --name "Shop Bot"'), 'username'),
  // "Payment request created: req_…"
  '<request_id>': () => fromLast((c) => c.includes('request create'), 'request_id', /\breq_[0-9a-z]{26}\b/),
  '<your-solana-address>': () => readerAddress,
};

function substitute(command: string): string {
  let c = command.replace(/npm run -s agent-wallet --/g, 'agent-wallet');
  if (daemon) c = c.replaceAll('127.0.0.1:8787', `127.0.0.1:${daemon.port}`);
  c = c.replaceAll('127.0.0.1:3000', `127.0.0.1:${upstream.port}`);
  const gate = [...outputs].reverse().find((o) => o.command.includes('merchant gate'));
  const gateUrl = gate ? /http:\/\/127\.0\.0\.1:\d+/.exec(gate.out)?.[0] : undefined;
  if (gateUrl) c = c.replaceAll('http://127.0.0.1:8402', gateUrl);
  for (const [name, value] of Object.entries(PLACEHOLDERS)) if (c.includes(name)) c = c.replaceAll(name, value());
  const left = /<[a-z][a-z0-9_-]*>/.exec(c);
  if (left) throw new Error(`the README's placeholder ${left[0]} has no earlier output to fill it from`);
  return c;
}

/** The last claim_url and claim_code printed (register, info). */
function lastClaim(): { url: string; code: string } {
  return { url: fromLast((c) => c.includes('register') || c.includes(' info'), 'claim_url'), code: fromLast((c) => c.includes('register') || c.includes(' info'), 'claim_code') };
}

test(
  "every shell command of the README's quick start and selling sections runs as printed",
  async () => {
    readerAddress = (await generateKeyPairSigner()).address;
    const steps = SECTIONS.flatMap((s) => shBlocks(s).flatMap(linesOf));
    expect(steps.filter((s) => s.kind === 'command').length).toBeGreaterThan(20);
    const ran: string[] = [];
    for (const step of steps) {
      if (step.kind === 'comment') {
        // The README asks for a claim in words: do it as a browser would.
        if (/Open the claim_url/.test(step.text)) {
          const c = lastClaim();
          await claim(c.url, c.code, 'you@example.com');
        }
        continue;
      }
      const printed = step.text;
      const bare = withoutComment(printed);
      if (/(^|&&\s*)npm test\b/.test(bare)) continue; // the suite itself
      const start = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)(?:npm install && )?npm start\b/.exec(bare);
      if (start) {
        const env = Object.fromEntries([...start[1]!.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
        const port = daemon?.port ?? 0;
        await stopDaemon();
        daemon = await startDaemon(env, port);
        ran.push(printed);
        continue;
      }
      let command: string;
      try {
        command = substitute(bare);
      } catch (err) {
        const last = outputs.at(-1);
        throw new Error(`README command cannot be filled in:\n  ${printed}\n${(err as Error).message}\nthe command before it:\n  ${last?.command}\nprinted:\n${last?.out}`);
      }
      const isBackground = /&\s*$/.test(command);
      const t0 = performance.now();
      const res = isBackground ? await runInBackground(`${command.replace(/&\s*$/, '').trimEnd()}${/--port\b/.test(command) ? '' : ' --port 0'}`) : await run(command);
      outputs.push({ command: printed, out: res.out });
      if (process.env.AW_README_VERBOSE) console.error(`--- ${Math.round(performance.now() - t0)} ms: ${command}\n${res.out}`);
      if (res.code !== 0) {
        throw new Error(`README command failed (exit ${res.code}) after ${ran.length} that ran:\n  ${printed}\nran as:\n  ${command}\noutput:\n${res.out}\n--- daemon log (tail) ---\n${daemon?.logs().slice(-3000)}`);
      }
      ran.push(printed);
      // "claim it as you claimed the Research Agent"
      if (/claim it as you claimed/.test(printed)) {
        const c = lastClaim();
        await claim(c.url, c.code, 'you@example.com');
      }
    }
    expect(ran.length).toBeGreaterThan(20);
  },
  300_000,
);
