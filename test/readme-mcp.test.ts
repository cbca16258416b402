/**
 * The README's MCP parts match the product (issue 43): the from-source snippet of "Two commands"
 * is what `npm run -s agent-wallet -- mcp --print-config` prints in a checkout, and it works as
 * printed — an MCP host runs its command with its args and env (the checkout's path in place of
 * `/path/to/agent-wallet`, the only thing a reader changes; this test runs in a checkout after
 * `npm install`, a from-source install), from another directory, and the SDK's client connects
 * over stdio and lists the tools. The tools it lists are exactly the README's tool list.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tempDir } from './helpers/services.ts';

const ROOT = join(import.meta.dir, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PLACEHOLDER = '/path/to/agent-wallet';

/** A `## ` section of the README, its subsections included. */
function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`README.md has no section "${heading}"`);
  const next = README.indexOf('\n## ', start + 1);
  return README.slice(start, next === -1 ? undefined : next);
}

interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The `agent-wallet` entry of the mcpServers snippet in a README section. */
function snippetIn(heading: string): ServerEntry {
  const blocks = [...section(heading).matchAll(/\n```json\n([\s\S]*?)\n```/g)].map((m) => m[1]!).filter((b) => b.includes('"mcpServers"'));
  expect(blocks).toHaveLength(1);
  const entry = (JSON.parse(blocks[0]!) as { mcpServers: Record<string, ServerEntry> }).mcpServers['agent-wallet'];
  if (!entry) throw new Error(`the snippet in "${heading}" has no "agent-wallet" server`);
  return entry;
}

/** The backticked names of the "Tools (snake_case):" item of the MCP section. */
function readmeTools(): string[] {
  const body = section('## Use from Claude Desktop / MCP hosts');
  const start = body.indexOf('- Tools (snake_case):');
  expect(start).toBeGreaterThan(-1);
  const end = body.indexOf('Input schemas', start);
  return [...body.slice(start, end).matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

/** A reader's environment: none of the suite's AGENT_WALLET_* settings, a home of its own. */
const home = tempDir('aw-readme-mcp-home-');
const readerEnv = (): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('AGENT_WALLET_'))),
  HOME: home,
});

const fromSource = snippetIn('## Two commands');
const asPrinted = (s: string) => s.replaceAll(PLACEHOLDER, ROOT);
let client: Client | null = null;
let stderr = '';
let printed: Promise<{ code: number; out: string; err: string }>;

beforeAll(async () => {
  // Both load src/main.ts (seconds on a loaded machine): at the same time.
  const proc = Bun.spawn(['npm', 'run', '-s', 'agent-wallet', '--', 'mcp', '--print-config'], { cwd: ROOT, env: readerEnv(), stdout: 'pipe', stderr: 'pipe' });
  printed = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).then(([out, err, code]) => ({ code, out, err }));
  // As an MCP host starts it: the snippet's command, args and env (the host adds its basic
  // environment: PATH, HOME, …), in a directory that is not the checkout.
  const transport = new StdioClientTransport({
    command: asPrinted(fromSource.command),
    args: fromSource.args.map(asPrinted),
    env: { ...fromSource.env, HOME: home },
    cwd: tempDir('aw-readme-mcp-cwd-'),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: 'readme-test', version: '1.0.0' });
  await client.connect(transport);
}, 30_000);
afterAll(async () => {
  await client?.close();
  await printed;
});

test('the from-source MCP snippet names the checkout absolutely, as --print-config prints it there', async () => {
  // No bare name: a fresh clone puts no agent-wallet (nor bun) on the host's PATH.
  for (const part of [fromSource.command, fromSource.args[0]!]) expect(part.startsWith(`${PLACEHOLDER}/`)).toBe(true);
  expect(isAbsolute(asPrinted(fromSource.command)) && existsSync(asPrinted(fromSource.command))).toBe(true);
  const { code, out, err } = await printed;
  expect({ code, err }).toEqual({ code: 0, err: '' });
  const entry = (JSON.parse(out) as { mcpServers: Record<string, ServerEntry> }).mcpServers['agent-wallet']!;
  // The same file (node_modules may be a link; the printed path is the one the process runs).
  expect({ command: realpathSync(entry.command), args: entry.args, url: entry.env.AGENT_WALLET_URL }).toEqual({
    command: realpathSync(asPrinted(fromSource.command)),
    args: fromSource.args.map(asPrinted),
    url: fromSource.env.AGENT_WALLET_URL!,
  });
}, 30_000);

test("the README's MCP tool list is exactly the tools the server started from the snippet lists", async () => {
  const served = (await client!.listTools()).tools.map((t) => t.name);
  const listed = readmeTools();
  expect(new Set(listed).size).toBe(listed.length);
  expect({ missing: served.filter((n) => !listed.includes(n)), unknown: listed.filter((n) => !served.includes(n)) }).toEqual({ missing: [], unknown: [] });
  // It logged to stderr only, and nothing that looks like a failure.
  expect(stderr).not.toMatch(/"level":"error"|error:/i);
});
